package bridge

import (
	"fmt"
	"net/http"

	"github.com/gorilla/mux"
)

// DemoUpstreamHandler routes a demo OAI-PMH provider: the endpoint at /oai (GET
// and POST, as OAI-PMH §3.1.1 allows) and a short plain-text page at / that says
// where it is. Other paths are 404.
func DemoUpstreamHandler(oai http.Handler, records int) http.Handler {
	r := mux.NewRouter()
	r.Handle("/oai", oai).Methods(http.MethodGet, http.MethodHead, http.MethodPost)
	r.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "rsbridge demo OAI-PMH repository: %d synthetic records.\nTry %s/oai?verb=Identify\n", records, "http://"+req.Host)
	}).Methods(http.MethodGet, http.MethodHead)
	return r
}
