package workspace

import (
	"fmt"
	"strings"
)

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
}

// splitLines splits keeping no terminators; a final line without newline is kept.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// myers computes a line edit script (Myers' O(ND) algorithm) after trimming the
// common prefix and suffix; past maxD differences the middle is replaced wholesale.
func myers(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for _, l := range a[:pre] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, myersMiddle(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

const maxD = 2000

func myersMiddle(a, b []string) []diffOp {
	n, m := len(a), len(b)
	max := n + m
	if max == 0 {
		return nil
	}
	off := max
	v := make([]int, 2*max+2)
	var trace [][]int
	found := false
	for d := 0; d <= max && d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		var ops []diffOp
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	// Backtrack.
	var rev []diffOp
	x, y := n, m
	for d := len(trace) - 1; d >= 0 && (x > 0 || y > 0); d-- {
		vv := trace[d]
		k := x - y
		var pk int
		if k == -d || k != d && vv[off+k-1] < vv[off+k+1] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vv[off+pk]
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, diffOp{' ', a[x]})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, diffOp{'+', b[y]})
			} else {
				x--
				rev = append(rev, diffOp{'-', a[x]})
			}
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// UnifiedDiff renders a unified diff (3 lines of context) of old -> new for name.
// It returns "" when nothing changed.
func UnifiedDiff(name, old, new string) string {
	if old == new {
		return ""
	}
	ops := myers(splitLines(old), splitLines(new))
	const ctx = 3
	var b strings.Builder
	from, to := "a/"+name, "b/"+name
	if old == "" {
		from = "/dev/null"
	}
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
	// Walk ops, emitting hunks around changes.
	i := 0
	aLine, bLine := 1, 1
	for i < len(ops) {
		// find next change
		j := i
		for j < len(ops) && ops[j].kind == ' ' {
			j++
		}
		if j == len(ops) {
			break
		}
		start := max(j-ctx, i)
		for k := i; k < start; k++ {
			aLine++
			bLine++
		}
		// extend the hunk while changes are within 2*ctx of each other
		end := j
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			e2 := end
			for e2 < len(ops) && ops[e2].kind == ' ' && e2-end < 2*ctx {
				e2++
			}
			if e2 < len(ops) && ops[e2].kind != ' ' {
				end = e2
				continue
			}
			end = min(end+ctx, len(ops))
			break
		}
		var hb strings.Builder
		na, nb := 0, 0
		for _, op := range ops[start:end] {
			line := op.line
			hb.WriteByte(op.kind)
			hb.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				hb.WriteString("\n\\ No newline at end of file\n")
			}
			if op.kind != '+' {
				na++
			}
			if op.kind != '-' {
				nb++
			}
		}
		as, bs := aLine, bLine
		if na == 0 {
			as--
		}
		if nb == 0 {
			bs--
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", as, na, bs, nb)
		b.WriteString(hb.String())
		aLine += na
		bLine += nb
		i = end
	}
	return b.String()
}
