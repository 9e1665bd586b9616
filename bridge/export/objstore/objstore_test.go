package objstore

import (
	"errors"
	"strings"
	"testing"
)

func TestValidKey(t *testing.T) {
	long := strings.Repeat("a", MaxSegmentLen)
	tests := []struct {
		key    string
		reason string // "" when valid
	}{
		{"repo/oai_dc/resource/oai:x:123456789/42", ""},
		{".well-known/resourcesync", ""},
		{"a+b c%d", ""},
		{"ü/é 名", ""},
		{"x?y#z;p=1&q", ""},
		{"a/.hidden/..x/x..", ""},
		{long + "/" + long, ""},
		{".rsbridge-tm", ""},
		{"", "empty"},
		{"/a", "starts with '/'"},
		{"a/", "has an empty segment"},
		{"a//b", "has an empty segment"},
		{"./a", `has a "." segment`},
		{"a/./b", `has a "." segment`},
		{"a/..", `has a ".." segment`},
		{"..", `has a ".." segment`},
		{"a\x00b", "contains NUL"},
		{"a/\xff", "not valid UTF-8"},
		{long + "a", "has a segment longer than 255 bytes"},
		{strings.Repeat(long+"/", 4) + "abcdefghij", "longer than 1024 bytes"},
		{".rsbridge-tmp", "starts with .rsbridge-tmp"},
		{".rsbridge-tmp/put-1", "starts with .rsbridge-tmp"},
		{".rsbridge-tmpx", "starts with .rsbridge-tmp"},
	}
	for _, tt := range tests {
		err := ValidKey(tt.key)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("ValidKey(%q) = %v, want nil", tt.key, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ValidKey(%q) = nil, want %q", tt.key, tt.reason)
			continue
		}
		if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("ValidKey(%q) = %v, want ErrInvalidKey saying %q", tt.key, err, tt.reason)
		}
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != tt.key {
			t.Errorf("ValidKey(%q): error %v does not carry the key", tt.key, err)
		}
	}
}
