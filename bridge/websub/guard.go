package websub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Callbacks come from anyone on the network, so by default the hub refuses
// to reach internal addresses with them: when the request arrives
// (checkCallback) and again when connecting. The connect-time check is what
// stops DNS rebinding: a name that resolved to a public address when the
// request arrived and to 127.0.0.1 when the hub connects. The guarded dialer
// resolves the name itself, skips internal addresses and dials the checked
// address directly (no second resolution), and the dialer's Control function
// checks the socket address once more just before connect.

// forbidden reports whether a is an address the hub must not connect to on
// behalf of a subscriber.
func forbidden(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsMulticast() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	if a.Is4() {
		b := a.As4()
		switch {
		case b[0] == 0: // "this network"
			return true
		case b[0] == 100 && b[1]&0xc0 == 64: // 100.64.0.0/10, carrier-grade NAT
			return true
		case b[0] == 192 && b[1] == 0 && b[2] == 0: // 192.0.0.0/24, IETF protocol assignments
			return true
		case b[0] == 198 && b[1]&0xfe == 18: // 198.18.0.0/15, benchmarking
			return true
		case b[0] >= 240: // reserved and broadcast
			return true
		}
		return false
	}
	b := a.As16()
	switch {
	case b[0] == 0xfe && b[1]&0xc0 == 0xc0: // fec0::/10, deprecated site-local
		return true
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && [8]byte(b[4:12]) == [8]byte{}: // 64:ff9b::/96, NAT64
		return forbidden(netip.AddrFrom4([4]byte(b[12:16])))
	case b[0] == 0x20 && b[1] == 0x02: // 2002::/16, 6to4
		return forbidden(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return false
}

// errInternal marks a connection refused by the guard.
var errInternal = errors.New("refusing to connect to an internal address on behalf of a subscriber")

// controlGuard is a net.Dialer Control function: it refuses to connect a
// socket to an internal address, whatever name led there.
func controlGuard(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("websub: dial %s %s: %w", network, address, errInternal)
	}
	if forbidden(ap.Addr()) {
		return fmt.Errorf("websub: dial %s: %w", address, errInternal)
	}
	return nil
}

// guardedDial resolves the host with resolver, skips internal addresses and
// dials the first public one that answers.
func guardedDial(d *net.Dialer, resolver Resolver) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, fmt.Errorf("websub: dial %s: %w", address, err)
		}
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else if addrs, err = resolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("websub: resolve %s: %w", host, err)
		}
		var errs []error
		for _, a := range addrs {
			a = a.Unmap()
			if forbidden(a) {
				errs = append(errs, fmt.Errorf("%s resolves to %s: %w", host, a, errInternal))
				continue
			}
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		if len(errs) == 0 {
			return nil, fmt.Errorf("websub: resolve %s: no addresses", host)
		}
		return nil, fmt.Errorf("websub: dial %s: %w", address, errors.Join(errs...))
	}
}

// newClient builds the hub's HTTP client: no proxy from the environment (a
// proxy would connect for us, past the guard), no redirects (WS-007: deliver
// to the exact callback; a 3xx is a failed attempt), keep-alive across
// deliveries, and with guard the address checks above.
func newClient(timeout time.Duration, workers int, guard bool, resolver Resolver) (*http.Client, *http.Transport) {
	d := &net.Dialer{Timeout: min(timeout, 10*time.Second), KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          max(100, 2*workers),
		MaxIdleConnsPerHost:   min(workers, 16),
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ResponseHeaderTimeout: timeout,
	}
	if guard {
		d.Control = controlGuard
		tr.DialContext = guardedDial(d, resolver)
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, tr
}
