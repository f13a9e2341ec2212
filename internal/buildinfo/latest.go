package buildinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ReleasesURL is where `lovia version --check` asks for the newest release (GitHub's
// "latest release" endpoint). LOVIA_UPDATE_URL overrides it (mirrors, tests).
const ReleasesURL = "https://api.github.com/repos/lovia-dev/lovia/releases/latest"

// Latest is the answer of a release check.
type Latest struct {
	// Version is the newest release's tag without the leading "v".
	Version string `json:"latest"`
	// URL is the release page.
	URL string `json:"url,omitempty"`
	// Newer reports that Version is newer than the running binary. A development build
	// (not a release version) is never "older": it is reported as such instead.
	Newer bool `json:"newer"`
	// Devel is set when the running binary is not a release build.
	Devel bool `json:"devel,omitempty"`
}

// maxReleaseBody bounds what a (possibly hostile) mirror can make lovia read.
const maxReleaseBody = 1 << 20

// CheckLatest asks url for the newest release and compares it with current. It is
// called only by `lovia version --check`, never on a run's path.
func CheckLatest(ctx context.Context, client *http.Client, url, current string) (Latest, error) {
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Latest{}, fmt.Errorf("release check: %w", err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("User-Agent", "lovia/"+current)
	resp, err := client.Do(req)
	if err != nil {
		return Latest{}, fmt.Errorf("release check: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Latest{}, fmt.Errorf("release check: %s answered %s", url, resp.Status)
	}
	var body struct {
		TagName string `json:"tag_name"`
		HTMLURL string `json:"html_url"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxReleaseBody)).Decode(&body); err != nil {
		return Latest{}, fmt.Errorf("release check: reading the answer of %s: %w", url, err)
	}
	latest := strings.TrimPrefix(body.TagName, "v")
	lv, ok := parseVersion(latest)
	if !ok {
		return Latest{}, errors.New("release check: the newest release has no version number (tag " + strconv.Quote(body.TagName) + ")")
	}
	out := Latest{Version: latest, URL: body.HTMLURL}
	cv, ok := parseVersion(strings.TrimPrefix(current, "v"))
	if !ok {
		out.Devel = true
		return out, nil
	}
	out.Newer = lv.newer(cv)
	return out, nil
}

// semver is a release version: major.minor.patch and an optional pre-release.
type semver struct {
	n   [3]int
	pre string
}

func parseVersion(s string) (semver, bool) {
	var v semver
	if i := strings.IndexByte(s, '+'); i >= 0 { // build metadata does not order
		s = s[:i]
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		v.pre, s = s[i+1:], s[:i]
		if v.pre == "" {
			return v, false
		}
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (len(p) > 1 && p[0] == '0') {
			return v, false
		}
		v.n[i] = n
	}
	return v, true
}

// newer orders as semver does for what releases use: numbers first, then a version
// without a pre-release is newer than one with; pre-releases compare by their
// dot-separated identifiers.
func (v semver) newer(than semver) bool {
	for i := range v.n {
		if v.n[i] != than.n[i] {
			return v.n[i] > than.n[i]
		}
	}
	switch {
	case v.pre == than.pre:
		return false
	case v.pre == "":
		return true
	case than.pre == "":
		return false
	}
	a, b := strings.Split(v.pre, "."), strings.Split(than.pre, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		ai, aerr := strconv.Atoi(a[i])
		bi, berr := strconv.Atoi(b[i])
		switch {
		case aerr == nil && berr == nil:
			return ai > bi
		case aerr == nil:
			return false // numeric identifiers sort before alphanumeric ones
		case berr == nil:
			return true
		default:
			return a[i] > b[i]
		}
	}
	return len(a) > len(b)
}
