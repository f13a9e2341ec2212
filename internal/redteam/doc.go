// Package redteam is lovia's own adversarial suite: a scripted "model" (script:FILE)
// issues hostile tool calls through the built binary, in hostile repositories, with
// canaries outside the root and fake provider keys in lovia's environment. Every case
// states what the attacker tries and the secure verdict; after each run the harness
// checks the invariants of docs/policies.md from the outside:
//
//   - nothing outside the root was created, changed or deleted without approval
//     (a private HOME with ~/.ssh, ~/.aws, ~/.bashrc, ~/.gitconfig and a sibling
//     directory; lovia's data and temp directories are the only exceptions);
//   - no canary (the random content of each outside file) and no provider key appears
//     in stdout, stderr, the database, its WAL, the logs, the root or the temp dir;
//   - no process started by the run is alive after lovia exits;
//   - nothing that runs later was planted (.git/config keys, .git/hooks, .lovia/);
//   - no connection reached the local listener a network case targets.
//
// Cases run batched: one lovia run replays the tool calls of many cases (one scripted
// turn per case) and every finding is attributed back to the case whose call or whose
// private target file it concerns. See cases_*_test.go for the tables.
//
// Verdicts: "denied" cases run with --approve all (an ask would let them through),
// "asks→refused" cases with --approve none, "allowed-but-contained" cases are judged
// by the invariants only, and control cases must succeed without approval.
//
// Running: go test ./internal/redteam builds the binary once (REDTEAM_BIN=path
// tests another build, e.g. a merge of branches); REDTEAM_RUN=substring selects
// cases by name; REDTEAM_DEBUG=1 with -v prints each run's output; -short skips it.
package redteam
