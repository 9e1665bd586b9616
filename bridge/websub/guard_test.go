package websub

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestForbidden(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.9.9.9", true},
		{"10.0.0.1", true},
		{"172.16.5.4", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"100.64.0.1", true},
		{"100.128.0.1", false},
		{"192.0.0.8", true},
		{"198.18.0.1", true},
		{"224.0.0.251", true},
		{"239.255.255.250", true},
		{"255.255.255.255", true},
		{"240.0.0.1", true},
		{"::1", true},
		{"::", true},
		{"fe80::1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fec0::1", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"64:ff9b::7f00:1", true},     // NAT64 of 127.0.0.1
		{"64:ff9b::cb00:7107", false}, // NAT64 of 203.0.113.7
		{"2002:7f00:1::", true},       // 6to4 of 127.0.0.1
		{"203.0.113.7", false},
		{"93.184.216.34", false},
		{"2001:db8::1", false},
		{"2606:4700::1111", false},
		{"::ffff:93.184.216.34", false},
	} {
		if got := forbidden(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("forbidden(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	if !forbidden(netip.Addr{}) {
		t.Error("the zero address must be forbidden")
	}
}

// TestControlGuard: the dialer's last check refuses internal socket
// addresses whatever name led there.
func TestControlGuard(t *testing.T) {
	for _, tc := range []struct {
		address string
		refused bool
	}{
		{"127.0.0.1:80", true},
		{"[::1]:443", true},
		{"10.0.0.1:8080", true},
		{"[::ffff:169.254.169.254]:80", true},
		{"203.0.113.7:443", false},
		{"[2001:db8::1]:443", false},
		{"not-an-address", true},
	} {
		err := controlGuard("tcp", tc.address, nil)
		if (err != nil) != tc.refused || (err != nil && !errors.Is(err, errInternal)) {
			t.Errorf("controlGuard(%s) = %v, want refused=%v", tc.address, err, tc.refused)
		}
	}
}

// TestGuardedDial: a name resolving to an internal address is not dialled;
// with a public and an internal address, only the public one is tried.
func TestGuardedDial(t *testing.T) {
	res := &fakeResolver{names: map[string][]netip.Addr{
		"rebind.example": addrs("127.0.0.1"),
		"mixed.example":  addrs("10.0.0.1", "::1"),
	}}
	d := &net.Dialer{Timeout: time.Second, Control: controlGuard}
	dial := guardedDial(d, res)
	for _, addr := range []string{"rebind.example:80", "mixed.example:443", "127.0.0.1:80", "[::1]:80"} {
		c, err := dial(context.Background(), "tcp", addr)
		if err == nil {
			c.Close()
			t.Fatalf("dial %s succeeded", addr)
		}
		if !errors.Is(err, errInternal) {
			t.Fatalf("dial %s: %v, want the guard's refusal", addr, err)
		}
	}
	if _, err := dial(context.Background(), "tcp", "unknown.example:80"); err == nil || errors.Is(err, errInternal) {
		t.Fatalf("dial of an unknown name: %v", err)
	}
}

// TestDNSRebinding: a callback name that resolves to a public address when
// the request arrives and to 127.0.0.1 afterwards never reaches the local
// server, neither for verification nor for delivery, with the hub's own
// client.
func TestDNSRebinding(t *testing.T) {
	sub := newSubscriber(t) // listens on 127.0.0.1
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(sub.srv.URL, "http://"))
	cb := "http://rebind.example:" + port + "/cb"
	res := &fakeResolver{
		names:    map[string][]netip.Addr{"rebind.example": addrs("203.0.113.7")},
		after:    map[string][]netip.Addr{"rebind.example": addrs("127.0.0.1")},
		switchAt: 2, // the request-time check sees the public address, the dialer the loopback one
	}
	db := openStore(t, "")
	h, ch := newHub(t, db, func(o *Options) {
		o.AllowPrivateCallbacks = false
		o.Resolver = res
		o.MaxAttempts = 2
	})
	h.Start()
	if w := send(h, form("subscribe", topicA, cb)); w.Code != http.StatusAccepted {
		t.Fatalf("HTTP %d %s", w.Code, w.Body)
	}
	if v := verified(t, ch); v.confirmed {
		t.Fatalf("verification through a rebound name confirmed: %+v", v)
	}
	// A subscription whose name is rebound later: delivery attempts fail.
	if err := db.PutSubscription(storeSub(topicA, cb, time.Now().Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := h.Publish(context.Background(), topicA, payload(1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery to be given up", func() bool { return h.Stats().Dropped == 1 })
	if n, _ := sub.counts(); n != 0 {
		t.Fatalf("the loopback server got %d requests through a rebound name", n)
	}
	if st := h.Stats(); st.Failed != 2 {
		t.Fatalf("stats %+v", st)
	}
}
