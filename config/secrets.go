package config

import (
	"net/url"
	"strings"
)

// DefaultSecretParams are the query parameters of a repository base_url that
// are taken for secrets unless secret_params says otherwise: their values
// are sent to the repository and never published or logged.
var defaultSecretParams = []string{"token", "access_token", "accesstoken", "api_key", "apikey", "key", "password", "passwd", "pwd", "secret", "auth", "signature", "sig"}

// DefaultSecretParams returns a copy of the built-in list.
func DefaultSecretParams() []string { return append([]string(nil), defaultSecretParams...) }

// PublicURL is raw as rsbridge may publish or log it: without userinfo
// (user:password@) and without the query parameters named in secret
// (case-insensitively). A value that does not parse as a URL is cut to its
// scheme and host when it has a userinfo part, else returned as it is.
func PublicURL(raw string, secret []string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if at := strings.LastIndex(raw, "@"); at >= 0 {
			if i := strings.Index(raw, "://"); i >= 0 && i < at {
				return raw[:i+3] + raw[at+1:]
			}
			return raw[at+1:]
		}
		return raw
	}
	u.User = nil
	if u.RawQuery != "" && len(secret) > 0 {
		q := u.Query()
		drop := false
		for k := range q {
			for _, s := range secret {
				if strings.EqualFold(k, s) {
					delete(q, k)
					drop = true
				}
			}
		}
		if drop {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

// PublicBaseURL is a repository's base URL as rsbridge publishes and logs
// it: Basic-auth userinfo and secret query parameters (secret_params)
// removed. The full URL is used only for requests to the repository.
func (c *Config) PublicBaseURL(r Repository) string {
	return PublicURL(r.BaseURL, c.Resolved(r).SecretParams)
}
