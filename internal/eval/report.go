package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lovia-dev/lovia/internal/safefile"
	"github.com/lovia-dev/lovia/internal/termtext"
	"github.com/lovia-dev/lovia/internal/usage"
)

// Report is the result of an eval run; its JSON form is what --out writes and
// --baseline reads.
type Report struct {
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Skipped  int           `json:"skipped,omitempty"`
	Cases    []CaseResult  `json:"cases"`
}

// CaseResult sums up the samples of one case. A case passes when every sample that ran
// passed.
type CaseResult struct {
	Name      string         `json:"name"`
	Pass      bool           `json:"pass"`
	PassRate  float64        `json:"pass_rate"`
	MeanScore float64        `json:"mean_score"`
	Samples   []SampleResult `json:"samples"`
}

// SampleResult is one run of a case.
type SampleResult struct {
	// Case names the case (for progress lines; the report nests samples in cases).
	Case       string        `json:"-"`
	Sample     int           `json:"sample"`
	Ran        bool          `json:"ran"`
	Pass       bool          `json:"pass"`
	Score      float64       `json:"score"`
	Checks     []CheckResult `json:"checks"`
	Output     string        `json:"output,omitempty"`
	Turns      int           `json:"turns"`
	Usage      usage.Usage   `json:"usage"`
	Error      string        `json:"error,omitempty"`
	DurationMS int64         `json:"duration_ms"`
}

// CheckResult is one check's verdict on a sample.
type CheckResult struct {
	Name string `json:"name"`
	Verdict
}

func summarize(name string, samples []SampleResult) CaseResult {
	cr := CaseResult{Name: name, Samples: samples}
	ran, passed, score := 0, 0, 0.0
	for _, s := range samples {
		if !s.Ran {
			continue
		}
		ran++
		score += s.Score
		if s.Pass {
			passed++
		}
	}
	if ran > 0 {
		cr.PassRate = float64(passed) / float64(ran)
		cr.MeanScore = score / float64(ran)
	}
	cr.Pass = ran > 0 && passed == ran
	return cr
}

func (r *Report) tally() {
	r.Passed, r.Failed, r.Skipped = 0, 0, 0
	for _, c := range r.Cases {
		ran := false
		for _, s := range c.Samples {
			ran = ran || s.Ran
		}
		switch {
		case !ran:
			r.Skipped++
		case c.Pass:
			r.Passed++
		default:
			r.Failed++
		}
	}
}

// OK reports whether every case that ran passed and none was skipped.
func (r *Report) OK() bool { return r.Failed == 0 && r.Skipped == 0 }

// WriteTable prints the report as an aligned table followed by failure details.
func (r *Report) WriteTable(w io.Writer) error {
	// Check details and errors quote model output: shown sanitized.
	sw := termtext.NewWriter(w)
	defer sw.Flush()
	w = sw
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tRESULT\tPASS RATE\tSCORE\tTURNS\tTOKENS")
	for _, c := range r.Cases {
		res := "FAIL"
		switch {
		case c.Pass:
			res = "pass"
		case !anyRan(c):
			res = "skipped"
		}
		turns, tokens := 0, 0
		for _, s := range c.Samples {
			turns = max(turns, s.Turns)
			tokens += s.Usage.Total()
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f%%\t%.2f\t%d\t%d\n", c.Name, res, c.PassRate*100, c.MeanScore, turns, tokens)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range r.Cases {
		for _, s := range c.Samples {
			if !s.Ran || s.Pass {
				continue
			}
			fmt.Fprintf(w, "\n%s (sample %d):\n", c.Name, s.Sample+1)
			if s.Error != "" {
				fmt.Fprintf(w, "  run error: %s\n", s.Error)
			}
			for _, ch := range s.Checks {
				if !ch.Pass {
					fmt.Fprintf(w, "  ✗ %s: %s\n", ch.Name, ch.Detail)
				}
			}
		}
	}
	_, err := fmt.Fprintf(w, "\n%d passed, %d failed", r.Passed, r.Failed)
	if err == nil && r.Skipped > 0 {
		_, err = fmt.Fprintf(w, ", %d skipped", r.Skipped)
	}
	if err == nil {
		_, err = fmt.Fprintf(w, " (%s)\n", r.Duration.Round(time.Millisecond))
	}
	return err
}

func anyRan(c CaseResult) bool {
	for _, s := range c.Samples {
		if s.Ran {
			return true
		}
	}
	return false
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// maxReportBytes caps a baseline report (a report of thousands of cases is far less).
const maxReportBytes = 64 << 20

// LoadReport reads a report written by WriteJSON (a baseline).
func LoadReport(path string) (*Report, error) {
	b, err := safefile.ReadNamed(path, maxReportBytes)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not an eval report: %w", path, err)
	}
	return &r, nil
}

// Change is one case's difference from the baseline.
type Change struct {
	Case   string  `json:"case"`
	Kind   string  `json:"kind"` // improved | regressed | new | removed
	Before float64 `json:"before"`
	After  float64 `json:"after"`
}

// Diff compares r with a baseline: a case regresses when its pass rate drops, or its
// pass rate is equal and its mean score drops by more than 0.05.
func Diff(baseline, r *Report) []Change {
	old := map[string]CaseResult{}
	for _, c := range baseline.Cases {
		old[c.Name] = c
	}
	var out []Change
	seen := map[string]bool{}
	for _, c := range r.Cases {
		seen[c.Name] = true
		b, ok := old[c.Name]
		switch {
		case !ok:
			out = append(out, Change{Case: c.Name, Kind: "new", After: c.PassRate})
		case c.PassRate < b.PassRate || (c.PassRate == b.PassRate && c.MeanScore < b.MeanScore-0.05):
			out = append(out, Change{Case: c.Name, Kind: "regressed", Before: b.PassRate, After: c.PassRate})
		case c.PassRate > b.PassRate || c.MeanScore > b.MeanScore+0.05:
			out = append(out, Change{Case: c.Name, Kind: "improved", Before: b.PassRate, After: c.PassRate})
		}
	}
	for _, c := range baseline.Cases {
		if !seen[c.Name] {
			out = append(out, Change{Case: c.Name, Kind: "removed", Before: c.PassRate})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Regressed reports whether any change is a regression.
func Regressed(changes []Change) bool {
	for _, c := range changes {
		if c.Kind == "regressed" {
			return true
		}
	}
	return false
}

// WriteDiff prints the changes, one per line.
func WriteDiff(w io.Writer, changes []Change) {
	sw := termtext.NewWriter(w)
	defer sw.Flush()
	w = sw
	if len(changes) == 0 {
		fmt.Fprintln(w, "no change against the baseline")
		return
	}
	for _, c := range changes {
		mark := map[string]string{"improved": "+", "regressed": "-", "new": "*", "removed": "x"}[c.Kind]
		fmt.Fprintf(w, "%s %-9s %s (pass rate %s → %s)\n", mark, c.Kind, c.Case, pct(c.Before, c.Kind == "new"), pct(c.After, c.Kind == "removed"))
	}
}

func pct(v float64, none bool) string {
	if none {
		return "—"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.0f%%", v*100), ".0")
}
