package app

import "github.com/lovia-dev/lovia/internal/plugin/subagents"

func subagentsSpec(preset string) subagents.ChildSpec {
	return subagents.ChildSpec{ID: "run_test.sub1", Preset: preset, Task: "t"}
}
