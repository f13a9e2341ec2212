package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lovia-dev/lovia/internal/buildinfo"
)

// NewCmdVersion prints the version; --check asks whether a newer release exists.
func NewCmdVersion(f *Factory) *cobra.Command {
	asJSON, check := false, false
	c := &cobra.Command{
		Use:   "version",
		Short: "Print lovia's version",
		Long: "Print lovia's version. --check also asks GitHub whether a newer release exists\n" +
			"(nothing is downloaded or installed; set LOVIA_NO_UPDATE_CHECK=1 to turn the\n" +
			"check off, LOVIA_UPDATE_URL to ask a mirror).",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			in := buildinfo.Get()
			if !check {
				if asJSON {
					return writeJSON(f.IO.Out, in)
				}
				_, err := fmt.Fprintln(f.IO.Out, in.String())
				return err
			}
			return versionCheck(c.Context(), f, in, asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.Flags().BoolVar(&check, "check", false, "ask whether a newer release exists (needs the network)")
	return c
}

func versionCheck(ctx context.Context, f *Factory, in buildinfo.Info, asJSON bool) error {
	if f.Getenv("LOVIA_NO_UPDATE_CHECK") != "" {
		if asJSON {
			return writeJSON(f.IO.Out, map[string]any{"version": in.Version, "checked": false, "reason": "LOVIA_NO_UPDATE_CHECK is set"})
		}
		_, err := fmt.Fprintf(f.IO.Out, "%s\nupdate check is off (LOVIA_NO_UPDATE_CHECK is set)\n", in.String())
		return err
	}
	url := f.Getenv("LOVIA_UPDATE_URL")
	if url == "" {
		url = buildinfo.ReleasesURL
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, err := buildinfo.CheckLatest(ctx, nil, url, in.Version)
	if err != nil {
		return fmt.Errorf("%w\n(offline? `lovia version` without --check needs no network)", err)
	}
	if asJSON {
		return writeJSON(f.IO.Out, map[string]any{"version": in.Version, "checked": true, "latest": l.Version, "newer": l.Newer, "devel": l.Devel, "url": l.URL})
	}
	out := f.IO.Out
	fmt.Fprintln(out, in.String())
	switch {
	case l.Devel:
		fmt.Fprintf(out, "this is a development build; the newest release is %s\n", l.Version)
	case l.Newer:
		fmt.Fprintf(out, "a newer release is out: %s (you have %s)\n", l.Version, in.Version)
		if l.URL != "" {
			fmt.Fprintf(out, "  %s\n", l.URL)
		}
		fmt.Fprintln(out, "  upgrade the way you installed lovia (brew upgrade, npm i -g @lovia-dev/lovia, scripts/install.sh, go install …@latest)")
	default:
		fmt.Fprintf(out, "up to date (newest release: %s)\n", l.Version)
	}
	return nil
}
