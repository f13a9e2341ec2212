package cmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/config"
	"github.com/lovia-dev/lovia/internal/config/trust"
	"github.com/lovia-dev/lovia/internal/errs"
)

// TrustOptions are the inputs of `lovia trust`.
type TrustOptions struct {
	F       *Factory
	Dir     string
	Untrust bool
	List    bool
	Yes     bool
}

// NewCmdTrust builds `lovia trust [DIR]`.
func NewCmdTrust(f *Factory, runF func(*TrustOptions) error) *cobra.Command {
	opts := &TrustOptions{F: f}
	c := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a folder's project settings (.lovia/) that widen what the agent may do",
		Long: `A repository's own settings are untrusted input. Settings in .lovia/config.yaml
and .lovia/presets that only tighten the policy (a stricter policy, deny rules,
denied_paths, lower limits) always apply. Those that widen it or run code —
writable/readable paths, allow rules, a looser policy, inherit_env, env, sandbox
off, hooks, MCP servers, presets that replace a bundled one or ask for the trusted
policy — apply only once you trust the folder.

lovia trust shows exactly those settings, asks, and records the folder (its
resolved path and a hash of the settings) in lovia's data directory. When the
settings change, the folder is untrusted again until you trust it anew. For CI,
--trust on run, chat, resume and eval trusts for that invocation only.`,
		Example: `  lovia trust              # the current repository
  lovia trust ~/src/app --yes
  lovia trust --list
  lovia trust --untrust ~/src/app`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if opts.List && (opts.Untrust || opts.Dir != "") {
				return errs.New(errs.KindUsage, "--list takes no folder and no --untrust", "lovia trust --list")
			}
			if runF != nil {
				return runF(opts)
			}
			return trustRun(opts)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&opts.Untrust, "untrust", false, "forget the folder: its loosening settings are ignored again")
	fl.BoolVar(&opts.List, "list", false, "list the trusted folders")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "trust without asking (after printing what is trusted)")
	return c
}

func trustRun(opts *TrustOptions) error {
	f := opts.F
	if opts.List {
		recs, err := trust.NewStore(config.DataDir(f.Getenv)).List()
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			fmt.Fprintln(f.IO.Out, "No trusted folders.")
			return nil
		}
		for _, r := range recs {
			fmt.Fprintf(f.IO.Out, "%s\t%d setting(s)\ttrusted %s\n", r.Path, len(r.Entries), r.At.Local().Format("2006-01-02 15:04"))
		}
		return nil
	}
	dir := opts.Dir
	if dir == "" {
		dir = f.Common.Cwd
	} else if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return errs.Newf(errs.KindUsage, "name the repository folder to trust, e.g. lovia trust ~/src/project", "%s is not an existing directory to trust", dir)
	}
	cfg, err := config.Load(config.Options{Cwd: dir, Getenv: f.Getenv})
	if err != nil {
		if !opts.Untrust {
			return err
		}
		// Forgetting a folder must work even when its config no longer loads.
		abs, aerr := filepath.Abs(dir)
		if aerr != nil {
			return err
		}
		root, _ := config.FindRoot(abs)
		if r, e := filepath.EvalSymlinks(root); e == nil {
			root = r
		}
		return untrust(f, trust.NewStore(config.DataDir(f.Getenv)), root)
	}
	t := cfg.Trust
	if opts.Untrust {
		return untrust(f, t.Store, t.Root)
	}
	if t.StoreErr != nil {
		return t.StoreErr
	}
	if len(t.Entries) == 0 {
		fmt.Fprintf(f.IO.Out, "Nothing to trust in %s: its project settings only tighten what the agent may do (or there are none).\n", t.Root)
		return nil
	}
	if t.Trusted && t.Via == "lovia trust" {
		fmt.Fprintf(f.IO.Out, "%s is already trusted with these settings.\n", t.Root)
		return nil
	}
	fmt.Fprintf(f.IO.Out, "Trusting %s lets these project settings apply:\n", t.Root)
	for _, e := range t.Entries {
		fmt.Fprintf(f.IO.Out, "  %s\n", e.String(t.Root))
	}
	if !opts.Yes {
		if !f.IO.StdinTTY {
			return errs.New(errs.KindUsage, "not trusting without confirmation (standard input is not a terminal)",
				"review the settings above, then run `lovia trust --yes"+dirArg(opts.Dir)+"`")
		}
		if !askYesNo(f.IO.In, f.IO.Out, "Trust this folder? [y/N] ") {
			fmt.Fprintln(f.IO.Out, "Not trusted; the settings above stay ignored.")
			return nil
		}
	}
	if err := t.Record(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "Trusted %s (until these settings change; lovia trust --untrust forgets it).\n", t.Root)
	return nil
}

func untrust(f *Factory, s trust.Store, root string) error {
	was, err := s.Untrust(root)
	if err != nil {
		return err
	}
	if was {
		fmt.Fprintf(f.IO.Out, "Forgot %s: its loosening project settings are ignored again.\n", root)
	} else {
		fmt.Fprintf(f.IO.Out, "%s was not trusted.\n", root)
	}
	return nil
}

func dirArg(dir string) string {
	if dir == "" {
		return ""
	}
	return " " + dir
}

// askYesNo prints question and reads one line: true for y or yes.
func askYesNo(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprint(out, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
