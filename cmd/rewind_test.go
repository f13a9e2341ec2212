package cmd

import (
	"strings"
	"testing"
)

func TestRewindFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    RewindOptions
		wantErr string
	}{
		{args: []string{"rewind", "r1"}, want: RewindOptions{RunID: "r1"}},
		{args: []string{"rewind", "r1", "--both", "--yes", "--force"}, want: RewindOptions{RunID: "r1", Both: true, Yes: true, Force: true}},
		{args: []string{"rewind", "r1", "--conversation", "-y"}, want: RewindOptions{RunID: "r1", Conversation: true, Yes: true}},
		{args: []string{"rewind", "r1", "--files", "--conversation"}, wantErr: "exclude each other"},
		{args: []string{"rewind"}, wantErr: "one run id"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := testFactory("", false)
			root := NewRootCmd(f)
			for _, c := range root.Commands() {
				if c.Name() == "rewind" {
					root.RemoveCommand(c)
				}
			}
			var got *RewindOptions
			root.AddCommand(NewCmdRewind(f, func(o *RewindOptions) error { got = o; return nil }))
			root.SetArgs(tt.args)
			err := root.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := *got
			g.F = nil
			if g != tt.want {
				t.Errorf("got %+v, want %+v", g, tt.want)
			}
		})
	}
}
