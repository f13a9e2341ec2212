//go:build unix

package sqlite

import "testing"

func TestParseStat(t *testing.T) {
	line := "1234 (my (weird) proc) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"
	state, start, ok := parseStat(line)
	if !ok || state != "S" || start != "987654" {
		t.Errorf("parseStat = %q %q %v", state, start, ok)
	}
	if _, _, ok := parseStat("garbage"); ok {
		t.Error("garbage parsed")
	}
}
