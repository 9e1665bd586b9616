package websub

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

const (
	maxFormBytes = 64 << 10
	maxURLBytes  = 4096
	maxSecret    = 200 // WS-003: hub.secret MUST be shorter than 200 bytes
)

// request is a well-formed subscription request.
type request struct {
	mode     string // subscribe or unsubscribe
	topic    string
	callback string
	secret   string
	lease    int64 // granted lease in seconds (subscribe)
}

// ServeHTTP is the hub endpoint. A well-formed subscription request is
// answered 202 Accepted at once (CN-034, WS-004) and verified afterwards; a
// malformed one is answered 4xx with a plain-text reason and nothing is ever
// sent to its callback.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.o.ExternalHub != "" {
		msg := fmt.Sprintf("this source publishes through the external WebSub hub %s; send subscription requests there", h.o.ExternalHub)
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			plain(w, http.StatusMethodNotAllowed, msg)
			return
		}
		plain(w, http.StatusNotFound, msg)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		plain(w, http.StatusMethodNotAllowed, "this is a WebSub hub: send subscription requests as POST with Content-Type application/x-www-form-urlencoded")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		plain(w, http.StatusUnsupportedMediaType, "send subscription requests with Content-Type application/x-www-form-urlencoded (WebSub 5.1); this hub takes no publications over HTTP")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			plain(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the subscription request is larger than %d bytes", maxFormBytes))
			return
		}
		plain(w, http.StatusBadRequest, "the request body is not a valid form: "+err.Error())
		return
	}
	req, err := h.parse(r.Context(), r.PostForm)
	if err != nil {
		plain(w, http.StatusBadRequest, err.Error())
		return
	}
	select {
	case h.verifying <- struct{}{}:
	default:
		w.Header().Set("Retry-After", "60")
		plain(w, http.StatusServiceUnavailable, "too many subscription requests are being verified; try again in a minute")
		return
	}
	h.asking(req, +1)
	if !h.goOwned(func() {
		defer func() { <-h.verifying }()
		defer h.asking(req, -1) // after the subscription is stored
		h.verifyIntent(req)
	}) {
		h.asking(req, -1)
		<-h.verifying
		plain(w, http.StatusServiceUnavailable, "the hub is shutting down; try again later")
		return
	}
	w.WriteHeader(http.StatusAccepted) // WS-004: the same whatever verification finds
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

// parse checks a subscription request (CN-033, WS-002, WS-003) and grants
// its lease.
func (h *Hub) parse(ctx context.Context, form url.Values) (request, error) {
	req := request{mode: form.Get("hub.mode"), topic: form.Get("hub.topic"), callback: form.Get("hub.callback"), secret: form.Get("hub.secret")}
	switch req.mode {
	case "subscribe", "unsubscribe":
	case "":
		return req, errors.New("hub.mode is missing: send hub.mode=subscribe or hub.mode=unsubscribe")
	default:
		return req, fmt.Errorf("hub.mode %q is not supported here: send subscribe or unsubscribe", req.mode)
	}
	if req.topic == "" {
		return req, errors.New("hub.topic is missing: send the topic URI from the rel=\"self\" Link of the channel")
	}
	if u, err := url.Parse(req.topic); err != nil || len(req.topic) > maxURLBytes || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return req, fmt.Errorf("hub.topic %q is not an absolute http(s) URL: send the topic URI from the rel=\"self\" Link of the channel", clip(req.topic))
	}
	if req.callback == "" {
		return req, errors.New("hub.callback is missing: send the URL notifications should be POSTed to")
	}
	if err := h.checkCallback(ctx, req.callback); err != nil {
		return req, err
	}
	if len(req.secret) >= maxSecret {
		return req, fmt.Errorf("hub.secret is %d bytes long; it must be shorter than %d bytes", len(req.secret), maxSecret)
	}
	req.lease = int64(h.o.LeaseDefault / time.Second)
	if s := form.Get("hub.lease_seconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return req, fmt.Errorf("hub.lease_seconds %q is not a whole number of seconds: send e.g. hub.lease_seconds=864000, or leave it out for the default", clip(s))
		}
		// CN-036: granted between LeaseMin and LeaseMax, whatever was asked.
		req.lease = min(max(n, int64(h.o.LeaseMin/time.Second)), int64(h.o.LeaseMax/time.Second))
	}
	return req, nil
}

// checkCallback refuses callbacks that are not http(s) and, unless allowed,
// those on internal addresses: literal ones and names that resolve to one.
// The dialer checks again when connecting (guard.go).
func (h *Hub) checkCallback(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || len(raw) > maxURLBytes || !u.IsAbs() {
		return fmt.Errorf("hub.callback %q is not an absolute URL: send the http(s) URL notifications should be POSTed to", clip(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("hub.callback %q has scheme %q; only http and https callbacks are supported", clip(raw), u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("hub.callback %q has no host", clip(raw))
	}
	if h.o.AllowPrivateCallbacks {
		return nil
	}
	refuse := func(addr netip.Addr) error {
		return fmt.Errorf("hub.callback host %q is %s, an internal address (private, loopback, link-local, unspecified or multicast); this hub delivers to public addresses only", host, addr)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if forbidden(addr) {
			return refuse(addr)
		}
		return nil
	}
	if lh := strings.ToLower(strings.TrimSuffix(host, ".")); lh == "localhost" || strings.HasSuffix(lh, ".localhost") {
		return fmt.Errorf("hub.callback host %q is local; this hub delivers to public addresses only", host)
	}
	ctx, cancel := context.WithTimeout(ctx, min(h.o.Timeout, 10*time.Second))
	defer cancel()
	addrs, err := h.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("hub.callback host %q cannot be resolved (%v): use a host name with a public DNS record", host, err)
	}
	for _, a := range addrs {
		if forbidden(a) {
			return refuse(a.Unmap())
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// verifyIntent checks with the subscriber that it asked for req (CN-035,
// WS-006) and only then changes the subscription (WS-002: state is unchanged
// when verification fails). A subscription to a topic this source does not
// publish is denied instead (WS-005).
func (h *Hub) verifyIntent(req request) {
	log := h.log.With("topic", req.topic, "callback", req.callback, "mode", req.mode)
	if req.mode == "subscribe" {
		if _, ok := h.o.Topic(req.topic); !ok {
			h.deny(log, req, "unknown topic: this source publishes no channel at this URI; find topic URIs in the Capability Lists")
			h.verified("denied", req, false)
			return
		}
		// Checked before verifying, so a full hub costs no request to the
		// callback; apply checks again under the lock.
		if why, err := h.full(req); err != nil || why != "" {
			if err == nil {
				h.deny(log, req, why)
			}
			h.verified("denied", req, false)
			return
		}
	}
	challenge := rand.Text() // WS-010: random, single use
	params := url.Values{"hub.mode": {req.mode}, "hub.topic": {req.topic}, "hub.challenge": {challenge}}
	if req.mode == "subscribe" {
		params.Set("hub.lease_seconds", strconv.FormatInt(req.lease, 10)) // WS-006: required for subscribe
	}
	if err := h.confirm(req.callback, params, challenge); err != nil {
		log.Info("subscriber did not confirm; subscription unchanged", "err", err)
		h.verified(req.mode, req, false)
		return
	}
	h.subMu.Lock()
	err := h.apply(req)
	h.subMu.Unlock()
	if err != nil {
		if h.ctx.Err() == nil {
			log.Error("subscriber confirmed but the subscription cannot be stored; the subscriber should send its request again", "err", err)
		}
		h.verified(req.mode, req, false)
		return
	}
	log.Info("subscription verified", "lease_seconds", req.lease)
	h.verified(req.mode, req, true)
}

// errFull refuses a subscription past the caps.
var errFull = errors.New("the hub holds the most subscriptions it takes")

// full says why a new subscription would pass the caps (MaxSubscriptions,
// MaxPerTopic), or "": a renewal of a live subscription always fits.
func (h *Hub) full(req request) (string, error) {
	now := h.now()
	var total, topic int
	renewal := false
	err := h.db.View(h.ctx, func(s *store.Snap) error {
		return s.Subscriptions("", func(sub store.Subscription) error {
			if !sub.Expires.After(now) {
				return nil
			}
			total++
			if sub.Topic == req.topic {
				topic++
				renewal = renewal || sub.Callback == req.callback
			}
			return nil
		})
	})
	switch {
	case err != nil || renewal:
		return "", err
	case topic >= h.o.MaxPerTopic:
		return fmt.Sprintf("this channel has the most subscriptions this hub takes (%d); try again later", h.o.MaxPerTopic), nil
	case total >= h.o.MaxSubscriptions:
		return fmt.Sprintf("this hub holds the most subscriptions it takes (%d); try again later", h.o.MaxSubscriptions), nil
	}
	return "", nil
}

// apply stores a confirmed request. Called with subMu held.
func (h *Hub) apply(req request) error {
	if req.mode == "unsubscribe" {
		return h.db.DeleteSubscription(req.topic, req.callback)
	}
	if why, err := h.full(req); err != nil {
		return err
	} else if why != "" {
		return fmt.Errorf("%w: %s", errFull, why)
	}
	now := h.now()
	created := now
	err := h.db.View(h.ctx, func(s *store.Snap) error {
		old, err := s.Subscription(req.topic, req.callback)
		if old != nil {
			created = old.Created // a renewal (WS-002)
		}
		return err
	})
	if err != nil {
		return err
	}
	return h.db.PutSubscription(store.Subscription{
		Topic: req.topic, Callback: req.callback, Secret: req.secret,
		Lease: req.lease, Expires: now.Add(time.Duration(req.lease) * time.Second), Created: created,
	})
}

func (h *Hub) verified(mode string, req request, ok bool) {
	if h.onVerified != nil {
		h.onVerified(mode, req.topic, req.callback, ok)
	}
}

// confirm GETs the callback with the verification parameters appended to
// its own (WS-007) and succeeds on a 2xx whose body is exactly the challenge
// (CN-038, WS-006).
func (h *Hub) confirm(callback string, params url.Values, challenge string) error {
	ctx, cancel := context.WithTimeout(h.ctx, h.o.Timeout)
	defer cancel()
	resp, err := h.get(ctx, callback, params)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(len(challenge))+1))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("callback answered HTTP %d", resp.StatusCode)
	}
	if err != nil {
		return fmt.Errorf("read the callback's answer: %w", err)
	}
	if string(body) != challenge {
		return errors.New("callback answered 2xx without echoing hub.challenge")
	}
	return nil
}

// deny tells the subscriber its subscription is refused (WS-005).
func (h *Hub) deny(log *slog.Logger, req request, reason string) {
	ctx, cancel := context.WithTimeout(h.ctx, h.o.Timeout)
	defer cancel()
	resp, err := h.get(ctx, req.callback, url.Values{"hub.mode": {"denied"}, "hub.topic": {req.topic}, "hub.reason": {reason}})
	if err != nil {
		log.Info("subscription denied; the callback could not be told", "reason", reason, "err", err)
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	log.Info("subscription denied", "reason", reason)
}

func (h *Hub) get(ctx context.Context, callback string, params url.Values) (*http.Response, error) {
	u, err := url.Parse(callback)
	if err != nil {
		return nil, fmt.Errorf("callback URL: %w", err)
	}
	if u.RawQuery != "" {
		u.RawQuery += "&" + params.Encode()
	} else {
		u.RawQuery = params.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("User-Agent", userAgent)
	return h.client.Do(req)
}
