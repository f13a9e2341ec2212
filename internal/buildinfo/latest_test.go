package buildinfo

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNewer(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"1.2.3", "1.2.2", true},
		{"1.2.3", "1.2.3", false},
		{"1.10.0", "1.9.9", true},
		{"2.0.0", "10.0.0", false},
		{"1.0.0", "1.0.0-rc.1", true},
		{"1.0.0-rc.2", "1.0.0-rc.1", true},
		{"1.0.0-rc.10", "1.0.0-rc.9", true},
		{"1.0.0-beta", "1.0.0-alpha", true},
		{"1.0.0-alpha.1", "1.0.0-alpha", true},
		{"1.0.0-alpha", "1.0.0-1", true},
		{"1.0.0+build.5", "1.0.0", false},
	}
	for _, c := range cases {
		a, ok1 := parseVersion(c.a)
		b, ok2 := parseVersion(c.b)
		if !ok1 || !ok2 {
			t.Fatalf("parse %q/%q failed", c.a, c.b)
		}
		if got := a.newer(b); got != c.want {
			t.Errorf("%s newer than %s = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	for _, bad := range []string{"", "devel", "1.2", "1.2.3.4", "01.2.3", "1.2.x", "1.2.3-", "-1.2.3"} {
		if _, ok := parseVersion(bad); ok {
			t.Errorf("parseVersion(%q) accepted", bad)
		}
	}
}

func TestCheckLatest(t *testing.T) {
	tag := "v0.9.0"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("User-Agent"), "lovia/") {
			t.Errorf("User-Agent = %q", r.Header.Get("User-Agent"))
		}
		w.Write([]byte(`{"tag_name":"` + tag + `","html_url":"https://example.invalid/r"}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	l, err := CheckLatest(ctx, srv.Client(), srv.URL, "0.8.1")
	if err != nil || !l.Newer || l.Version != "0.9.0" || l.URL == "" {
		t.Fatalf("older binary: %+v %v", l, err)
	}
	l, err = CheckLatest(ctx, srv.Client(), srv.URL, "v0.9.0")
	if err != nil || l.Newer {
		t.Fatalf("same version: %+v %v", l, err)
	}
	l, err = CheckLatest(ctx, srv.Client(), srv.URL, "devel")
	if err != nil || l.Newer || !l.Devel {
		t.Fatalf("devel: %+v %v", l, err)
	}
	tag = "nightly"
	if _, err := CheckLatest(ctx, srv.Client(), srv.URL, "0.8.1"); err == nil || !strings.Contains(err.Error(), "nightly") {
		t.Fatalf("tag without version: %v", err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "rate limited", http.StatusForbidden)
	}))
	defer bad.Close()
	if _, err := CheckLatest(ctx, bad.Client(), bad.URL, "0.8.1"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("403: %v", err)
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.2.3", "1.0.0-rc.1", "1.0.0+x", "", "-", "1..2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseVersion(s)
		if ok && v.newer(v) {
			t.Fatalf("%q newer than itself", s)
		}
	})
}
