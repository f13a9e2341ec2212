package tui

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the LCS table; larger inputs get a whole-replacement diff.
const maxDiffCells = 1 << 20

type diffOp struct {
	kind byte // ' ', '-', '+'
	text string
}

// unifiedDiff returns a unified diff (3 lines of context) between two texts, for
// showing edits; it is a display aid, not a patch format guarantee.
func unifiedDiff(path, oldText, newText string) string {
	a, b := splitLines(oldText), splitLines(newText)
	ops := diffLinesOps(a, b)
	name := path
	if name == "" {
		name = "file"
	}
	var out strings.Builder
	if strings.HasPrefix(name, "/") {
		fmt.Fprintf(&out, "--- %s\n+++ %s\n", name, name)
	} else {
		fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	}
	const ctx = 3
	// Walk ops, emitting hunks around changes.
	i := 0
	aLine, bLine := 1, 1
	pos := make([][2]int, len(ops)) // line numbers before each op
	for k, op := range ops {
		pos[k] = [2]int{aLine, bLine}
		if op.kind != '+' {
			aLine++
		}
		if op.kind != '-' {
			bLine++
		}
	}
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			// run of context: does another change follow within 2*ctx?
			j := end
			for j < len(ops) && ops[j].kind == ' ' {
				j++
			}
			if j < len(ops) && j-end <= 2*ctx {
				end = j
				continue
			}
			end = min(len(ops), end+ctx)
			break
		}
		var na, nb int
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				na++
			}
			if op.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", hunkStart(pos[start][0], na), na, hunkStart(pos[start][1], nb), nb)
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			out.WriteByte('\n')
		}
		i = end
	}
	return strings.TrimRight(out.String(), "\n")
}

func hunkStart(line, n int) int {
	if n == 0 {
		return line - 1
	}
	return line
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLinesOps computes a line diff by longest common subsequence after trimming the
// common prefix and suffix.
func diffLinesOps(a, b []string) []diffOp {
	var ops []diffOp
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for _, l := range a[:p] {
		ops = append(ops, diffOp{' ', l})
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) > maxDiffCells {
		for _, l := range ma {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, diffOp{'+', l})
		}
	} else {
		ops = append(ops, lcsOps(ma, mb)...)
	}
	for _, l := range a[len(a)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func lcsOps(a, b []string) []diffOp {
	n, m := len(a), len(b)
	// dp[i][j] = LCS length of a[i:], b[j:]
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			ops = append(ops, diffOp{'-', a[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		ops = append(ops, diffOp{'-', a[i]})
	}
	for ; j < m; j++ {
		ops = append(ops, diffOp{'+', b[j]})
	}
	return ops
}
