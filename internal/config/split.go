package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lovia-dev/lovia/internal/config/trust"
)

// A project's settings (.lovia/config.yaml) are repository content: untrusted input.
// splitProject divides them into those that only tighten what the agent may do
// (always applied) and those that loosen it or run code, which apply only in a
// trusted folder. Anything this function does not recognise counts as loosening, so
// a new setting is safe until it is classified here.

// unionLists are the list settings a project adds to the user's instead of
// replacing them: replacing would drop the user's deny rules (a loosening).
var unionLists = map[string]bool{
	"workspace.readable":      true,
	"workspace.writable":      true,
	"workspace.denied_paths":  true,
	"workspace.path_rules":    true,
	"workspace.command_rules": true,
	"hooks":                   true,
	"guardrails.output":       true,
	"skills.dirs":             true,
	"mcp_rules":               true,
	"secrets":                 true,
}

// Defaults the comparisons use when the user's file leaves a value unset.
const (
	defaultMaxTurns     = 50
	defaultShellTimeout = 300
	defaultSandbox      = "auto"
)

type splitter struct {
	base  File // the user's file: what the project is compared with
	file  string
	lines map[string]int
	loose []trust.Entry
}

// splitProject returns the part of the project mapping gm that applies without
// trust, and the entries that need it.
func splitProject(base File, gm map[string]any, file string, lines map[string]int) (map[string]any, []trust.Entry) {
	s := &splitter{base: base, file: file, lines: lines}
	keep := map[string]any{}
	basePolicy := base.Policy
	if basePolicy == "" {
		basePolicy = base.Workspace.Policy
	}
	for k, v := range gm {
		switch k {
		case "model", "preset", "models", "compaction", "provider", "secrets":
			// Which model, preset and context settings: no authority of their own (a
			// preset's policy is checked with the presets).
			keep[k] = v
		case "policy":
			s.policy(keep, k, k, v, basePolicy)
		case "max_turns":
			s.limit(keep, k, k, v, base.MaxTurns, defaultMaxTurns, "more turns than")
		case "budget_tokens":
			s.limit(keep, k, k, v, base.BudgetTokens, 0, "a larger token budget than")
		case "workspace":
			if m, ok := v.(map[string]any); ok {
				if w := s.workspace(m, basePolicy); len(w) > 0 {
					keep[k] = w
				}
			} else {
				s.lose(k, v, "not understood")
			}
		case "mcp":
			if m, ok := v.(map[string]any); ok {
				if w := s.mcp(m); len(w) > 0 {
					keep[k] = w
				}
			} else {
				s.lose(k, v, "not understood")
			}
		case "hooks":
			s.eachLoose(k, v, "runs a command on agent events")
		case "memory":
			s.lose(k, v, "sends your memories to an embedding server")
		case "pricing":
			// Lower prices would stretch a --max-budget-usd the user set.
			s.lose(k, v, "changes the model prices that costs and --max-budget-usd are measured in")
		case "guardrails":
			if g := s.guardrails(v); len(g) > 0 {
				keep[k] = g
			}
		case "skills":
			m, ok := v.(map[string]any)
			if !ok {
				s.lose(k, v, "not understood")
				continue
			}
			w := map[string]any{}
			for sk, sv := range m {
				switch sk {
				case "no_watch":
					w[sk] = sv
				case "dirs":
					s.eachLoose("skills.dirs", sv, "loads skills (sent to the model) from this directory")
				default:
					s.lose("skills."+sk, sv, "not understood")
				}
			}
			if len(w) > 0 {
				keep[k] = w
			}
		case "mcp_rules":
			s.rules(keep, k, k, v, "decision", nil)
		default:
			s.lose(k, v, "not understood")
		}
	}
	trust.Sort(s.loose)
	return keep, s.loose
}

func (s *splitter) line(key string) int {
	for {
		if l, ok := s.lines[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			return 0
		}
		key = key[:i]
	}
}

func (s *splitter) lose(key string, v any, why string) {
	s.loose = append(s.loose, trust.Entry{File: s.file, Line: s.line(key), Key: key, Value: v, Why: why})
}

// eachLoose records every item of a list as needing trust.
func (s *splitter) eachLoose(key string, v any, why string) {
	list, ok := v.([]any)
	if !ok {
		if v != nil {
			s.lose(key, v, why)
		}
		return
	}
	for i, item := range list {
		s.lose(fmt.Sprintf("%s[%d]", key, i), item, why)
	}
}

func (s *splitter) policy(keep map[string]any, name, key string, v any, base string) {
	p, _ := v.(string)
	if trust.Looser(p, base) {
		b := base
		if b == "" {
			b = DefaultPolicy + " (the default)"
		}
		s.lose(key, v, "a looser policy than "+b)
		return
	}
	keep[name] = v
}

// limit keeps a limit that is at most the base's (0 = default; def 0 = unlimited).
func (s *splitter) limit(keep map[string]any, name, key string, v any, base, def int, what string) {
	n, ok := asInt(v)
	if !ok {
		s.lose(key, v, "not understood")
		return
	}
	eff := base
	if eff == 0 {
		eff = def
	}
	switch {
	case n == 0 && base == 0:
		keep[name] = v
	case n == 0 || (eff > 0 && n > eff):
		s.lose(key, v, what+" "+limitName(eff))
	default:
		keep[name] = v
	}
}

func limitName(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

func (s *splitter) workspace(m map[string]any, basePolicy string) map[string]any {
	b := s.base.Workspace
	keep := map[string]any{}
	for k, v := range m {
		key := "workspace." + k
		switch k {
		case "policy":
			s.policy(keep, k, key, v, basePolicy)
		case "sandbox":
			base := b.Sandbox
			if base == "" {
				base = defaultSandbox
			}
			if mode, _ := v.(string); sandboxRank(mode) < sandboxRank(base) {
				s.lose(key, v, "a weaker sandbox than "+base)
			} else {
				keep[k] = v
			}
		case "readable":
			s.eachLoose(key, v, "readable without asking")
		case "writable":
			s.eachLoose(key, v, "writable without asking")
		case "denied_paths":
			keep[k] = v
		case "path_rules":
			// A rule's allow or ask overrides the policy's deny (even for credential
			// stores), so only all-deny rules tighten.
			s.rules(keep, k, key, v, "", nil)
		case "command_rules":
			s.rules(keep, k, key, v, "decision", s.baseDenies())
		case "inherit_env":
			if on, _ := v.(bool); on && !b.InheritEnv {
				s.lose(key, v, "passes lovia's whole environment (API keys included) to commands")
			} else {
				keep[k] = v
			}
		case "env":
			em, ok := v.(map[string]any)
			if !ok {
				s.lose(key, v, "not understood")
				continue
			}
			for _, name := range sortedKeys(em) {
				s.lose(key+"."+name, em[name], "sets a variable in every command's environment")
			}
		case "shell_timeout":
			s.limit(keep, k, key, v, b.ShellTimeout, defaultShellTimeout, "a longer shell timeout than")
		case "strict_sandbox":
			if on, _ := v.(bool); !on && b.StrictSandbox {
				s.lose(key, v, "lets builds write tool caches the user keeps read-only")
			} else {
				keep[k] = v
			}
		case "network":
			base := "ask"
			if d, _ := v.(string); decisionRank(d) < decisionRank(base) {
				s.lose(key, v, "network access without asking")
			} else {
				keep[k] = v
			}
		default:
			s.lose(key, v, "not understood")
		}
	}
	return keep
}

// rules keeps the deny entries of a rule list (and the ask entries no shorter user
// deny covers, for command rules); the rest need trust. decisionField "" means path
// rules (read/write).
func (s *splitter) rules(keep map[string]any, name, key string, v any, decisionField string, denies [][]string) {
	list, ok := v.([]any)
	if !ok {
		if v != nil {
			s.lose(key, v, "not understood")
		}
		return
	}
	var kept []any
	for i, item := range list {
		m, _ := item.(map[string]any)
		ikey := fmt.Sprintf("%s[%d]", key, i)
		if decisionField == "" {
			r, _ := m["read"].(string)
			w, _ := m["write"].(string)
			if (r == "" || isDeny(r)) && (w == "" || isDeny(w)) && (r != "" || w != "") {
				kept = append(kept, item)
			} else {
				s.lose(ikey, item, "a path rule that allows or asks overrides the policy's deny")
			}
			continue
		}
		d, _ := m[decisionField].(string)
		switch {
		case isDeny(d):
			kept = append(kept, item)
		case strings.EqualFold(strings.TrimSpace(d), "ask") && !coveredByDeny(m, denies):
			kept = append(kept, item)
		default:
			s.lose(ikey, item, "allows without asking")
		}
	}
	if len(kept) > 0 {
		keep[name] = kept
	}
}

func isDeny(d string) bool { return strings.EqualFold(strings.TrimSpace(d), "deny") }

// baseDenies are the word lists of the user's deny command rules.
func (s *splitter) baseDenies() [][]string {
	var out [][]string
	for _, r := range s.base.Workspace.CommandRules {
		if isDeny(r.Decision) {
			out = append(out, strings.Fields(r.Prefix))
		}
	}
	return out
}

// coveredByDeny reports whether a shorter user deny rule is a prefix of the command
// rule m: its ask (longest prefix wins) would turn the user's deny into a question.
func coveredByDeny(m map[string]any, denies [][]string) bool {
	p, _ := m["prefix"].(string)
	words := strings.Fields(p)
	for _, d := range denies {
		if len(d) < len(words) && slices.Equal(d, words[:len(d)]) {
			return true
		}
	}
	return false
}

func (s *splitter) mcp(m map[string]any) map[string]any {
	keep := map[string]any{}
	for k, v := range m {
		if k != "servers" {
			s.lose("mcp."+k, v, "not understood")
			continue
		}
		servers, ok := v.(map[string]any)
		if !ok {
			if v != nil {
				s.lose("mcp.servers", v, "not understood")
			}
			continue
		}
		kept := map[string]any{}
		for _, name := range sortedKeys(servers) {
			sv := servers[name]
			// Switching off one of the user's servers only takes something away.
			if sm, ok := sv.(map[string]any); ok && len(sm) == 1 && sm["disabled"] == true {
				kept[name] = sv
				continue
			}
			why := "starts this MCP server (a program) with its tools"
			if sm, ok := sv.(map[string]any); ok && sm["url"] != nil {
				why = "connects to this MCP server and offers its tools"
			}
			s.lose("mcp.servers."+name, sv, why)
		}
		if len(kept) > 0 {
			keep["servers"] = kept
		}
	}
	return keep
}

func sandboxRank(mode string) int {
	switch mode {
	case "off":
		return 0
	case "required":
		return 2
	}
	return 1
}

func decisionRank(d string) int {
	switch strings.ToLower(strings.TrimSpace(d)) {
	case "allow":
		return 0
	case "deny":
		return 2
	}
	return 1
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// mergeProject merges the project mapping src into dst like deepMerge, except that
// the unionLists are appended to (never replace) the lower layers' lists.
func mergeProject(dst, src map[string]any, prefix string) {
	for k, v := range src {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sm, ok := v.(map[string]any); ok {
			dm, ok := dst[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
				dst[k] = dm
			}
			mergeProject(dm, sm, key)
			continue
		}
		if unionLists[key] {
			if dl, ok := dst[k].([]any); ok {
				if sl, ok := v.([]any); ok {
					dst[k] = append(slices.Clone(dl), sl...)
					continue
				}
			}
		}
		dst[k] = v
	}
}

// guardrails keeps the project's LLM-check output guardrails (they can only stop a
// run) and marks its command guardrails as needing trust (they run code).
func (s *splitter) guardrails(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		s.lose("guardrails", v, "not understood")
		return nil
	}
	keep := map[string]any{}
	for k, lv := range m {
		key := "guardrails." + k
		list, ok := lv.([]any)
		if k != "output" || !ok {
			s.lose(key, lv, "not understood")
			continue
		}
		var kept []any
		for i, item := range list {
			if im, ok := item.(map[string]any); ok && im["command"] == nil {
				kept = append(kept, item)
				continue
			}
			s.lose(fmt.Sprintf("%s[%d]", key, i), item, "runs a command on the final output (output guardrail)")
		}
		if len(kept) > 0 {
			keep[k] = kept
		}
	}
	return keep
}
