package config

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte(minimal))
	f.Add([]byte("defaults: &d {delay: 0s}\nrepositories:\n  - {<<: *d, name: a, base_url: \"http://a/\", schedule: \"TZ=x\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data))
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "not found in type") || strings.Contains(msg, "cannot unmarshal") {
				t.Errorf("yaml.v3 message leaked: %s", msg)
			}
			return
		}
		_ = c.Validate()
		for _, r := range c.Repositories {
			_ = c.Resolved(r)
			_ = c.HasReconcile(r)
		}
	})
}
