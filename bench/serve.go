package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

// table is the one table the benchmark prints.
type table struct{ rows [][3]string }

func (t *table) add(what, how, result string) { t.rows = append(t.rows, [3]string{what, how, result}) }

func (t *table) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tcondition\tresult")
	fmt.Fprintln(tw, "-------\t---------\t------")
	for _, r := range t.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r[0], r[1], r[2])
	}
	tw.Flush()
}

var (
	locRE = regexp.MustCompile(`<loc>([^<]+)</loc>`)
	urlRE = regexp.MustCompile(`<url>`)
)

// timedGet fetches a URL, asking for gzip as destinations do, and says how
// long the response took to arrive: what the server costs, not the client's
// decompression (done after the clock stops).
func timedGet(ctx context.Context, c *http.Client, url string) ([]byte, time.Duration, int, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, 0, err
	}
	req.Header.Set("Accept-Encoding", "gzip") // set here, the transport leaves the body compressed
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	if err == nil && resp.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	return body, d, resp.StatusCode, err
}

func unescape(s string) string { return strings.ReplaceAll(s, "&amp;", "&") }

// serving measures what destinations and operators read after the harvest.
func (b *bench) serving(ctx context.Context) error {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	if err := b.bigPage(ctx, c); err != nil {
		return err
	}
	b.resources(ctx, c)
	for _, page := range []string{"/", "/status.json"} {
		var ds []time.Duration
		for range 11 {
			_, d, code, err := timedGet(ctx, c, b.base+page)
			if err != nil || code != http.StatusOK {
				return fmt.Errorf("GET %s: %d %v", page, code, err)
			}
			ds = append(ds, d)
		}
		slices.Sort(ds)
		b.table.add("status page", "GET "+page+" (11 times)", fmt.Sprintf("median %s, max %s", ms(ds[5]), ms(ds[10])))
	}
	return b.sourceDescription(ctx, c)
}

// bigPage fetches the large repository's Resource List (with 50,000 records
// or fewer, one document; above, the first page of its index), cold (never
// asked for before) and again.
func (b *bench) bigPage(ctx context.Context, c *http.Client) error {
	if b.o.bigRecords == 0 {
		return nil
	}
	page := b.base + "/big/oai_dc/all/resourcelist.xml"
	body, d, code, err := timedGet(ctx, c, page)
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %v", page, code, err)
	}
	if strings.Contains(string(body), "<sitemapindex") {
		m := locRE.FindStringSubmatch(string(body))
		if m == nil {
			return fmt.Errorf("the Resource List index of big lists no page")
		}
		page = unescape(m[1])
		if body, d, code, err = timedGet(ctx, c, page); err != nil || code != http.StatusOK {
			return fmt.Errorf("GET %s: %d %v", page, code, err)
		}
	}
	b.table.add("Resource List page", fmt.Sprintf("%d entries, cold", len(urlRE.FindAll(body, -1))), ms(d))
	if body, d, code, err = timedGet(ctx, c, page); err != nil || code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %v", page, code, err)
	}
	b.table.add("Resource List page", fmt.Sprintf("%d entries, again", len(urlRE.FindAll(body, -1))), ms(d))
	return b.bigChangeList(ctx, c)
}

// bigChangeList fetches the largest Change List of the large repository's
// first harvest (every entry a created event), cold and again.
func (b *bench) bigChangeList(ctx context.Context, c *http.Client) error {
	index := b.base + "/big/oai_dc/all/changelist.xml"
	body, _, code, err := timedGet(ctx, c, index)
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %v", index, code, err)
	}
	var biggest []byte
	var page string
	var took time.Duration
	for _, m := range locRE.FindAllStringSubmatch(string(body), -1) {
		u := unescape(m[1])
		if !strings.Contains(u, "/changelist-") {
			continue
		}
		list, d, code, err := timedGet(ctx, c, u)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("GET %s: %d %v", u, code, err)
		}
		if len(list) > len(biggest) {
			biggest, page, took = list, u, d
		}
	}
	if page == "" {
		return fmt.Errorf("the Change List index of big lists no list")
	}
	b.table.add("Change List", fmt.Sprintf("%d entries (the largest of big), cold", len(urlRE.FindAll(biggest, -1))), ms(took))
	body, d, code, err := timedGet(ctx, c, page)
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %v", page, code, err)
	}
	b.table.add("Change List", fmt.Sprintf("%d entries, again", len(urlRE.FindAll(body, -1))), ms(d))
	return nil
}

// resources GETs random records of random repositories from 32 clients for
// 15 seconds.
func (b *bench) resources(ctx context.Context, c *http.Client) {
	const clients, span = 32, 15 * time.Second
	var live []repo
	for _, r := range b.repos {
		if !r.dead && r.delay == 0 {
			live = append(live, r)
		}
	}
	var mu sync.Mutex
	var ds []time.Duration
	codes := map[int]int{}
	end := time.Now().Add(span)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for time.Now().Before(end) && ctx.Err() == nil {
				r := live[rng.IntN(len(live))]
				_, d, code, err := timedGet(ctx, c, b.resourceURL(r, rng.IntN(r.records)))
				if err != nil {
					code = 0
				}
				mu.Lock()
				ds = append(ds, d)
				codes[code]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(ds)
	q := func(p float64) time.Duration { return ds[min(int(p*float64(len(ds))), len(ds)-1)] }
	b.table.add("resource GET", fmt.Sprintf("%d clients, %s, random records of %d repositories", clients, span, len(live)),
		fmt.Sprintf("%.0f req/s; p50 %s, p99 %s; statuses %v", float64(len(ds))/span.Seconds(), ms(q(0.5)), ms(q(0.99)), codes))
}

// sourceDescription checks that the Source Description (an index when it
// must be) names the all-records Capability List of every repository and
// format, and the sets of the repositories with 2,000.
func (b *bench) sourceDescription(ctx context.Context, c *http.Client) error {
	body, d, _, err := timedGet(ctx, c, b.base+"/.well-known/resourcesync")
	if err != nil {
		return err
	}
	docs := []string{string(body)}
	kind := "a urlset"
	if strings.Contains(docs[0], "<sitemapindex") {
		kind = "an index"
		for _, m := range locRE.FindAllStringSubmatch(docs[0], -1) {
			page, _, _, err := timedGet(ctx, c, unescape(m[1]))
			if err != nil {
				return err
			}
			docs = append(docs, string(page))
		}
	}
	names := map[string]bool{}
	for _, doc := range docs {
		for _, m := range locRE.FindAllStringSubmatch(doc, -1) {
			names[unescape(m[1])] = true
		}
	}
	missing, sets := 0, 0
	for _, r := range b.repos {
		for _, p := range []string{"oai_dc", "jpcoar_2.0"} {
			if !names[fmt.Sprintf("%s/%s/%s/all/capabilitylist.xml", b.base, r.name, p)] {
				missing++
			}
		}
	}
	for n := range names {
		if strings.Contains(n, "/set/") {
			sets++
		}
	}
	verdict := "every repository and format listed"
	if missing > 0 {
		verdict = fmt.Sprintf("%d all-records Capability Lists MISSING", missing)
	}
	b.table.add("Source Description", kind+fmt.Sprintf(", %d documents", len(docs)),
		fmt.Sprintf("%d Capability Lists (%d of sets); %s; first document in %s", len(names), sets, verdict, ms(d)))
	return nil
}

// restart kills rsbridge with SIGKILL and measures the start-up after it:
// until it answers /healthz, and until /status.json.
func (b *bench) restart(ctx context.Context) error {
	b.proc.Process.Signal(syscall.SIGKILL)
	<-b.exited
	start := time.Now()
	if err := b.start(ctx); err != nil {
		return err
	}
	up := time.Since(start)
	if _, err := get(b.base + "/status.json"); err != nil {
		return err
	}
	anon, file := memory(b.proc.Process.Pid)
	b.table.add("start-up after SIGKILL", "until /healthz; until /status.json", fmt.Sprintf("%s; %s (then RssAnon %s, RssFile %s)", ms(up), ms(time.Since(start)), mib(anon), mib(file)))
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
