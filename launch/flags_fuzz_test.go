package launch

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// fuzzedFlags are the run flags that take a value the harness checks.
var fuzzedFlags = []string{"damping", "alpha", "dense-threshold", "pull-threshold", "iterations", "batch", "workers",
	"inflight", "timeout", "peer-timeout", "source", "hub-degree", "refrd-min", "sparse-valrd-min", "seed", "entry-size", "merge-gap", "mn-mem", "load-mem", "cn-mem", "nic-profile"}

// Any value of any run flag is accepted, or refused as bad input with one
// line naming the flag — never a panic.
func FuzzRunFlags(f *testing.F) {
	for i, v := range []string{"NaN", "Inf", "-Inf", "-1", "0", "1e308", "18446744073709551615", "18446744073709551616", "", "0.5", "10s", "-3s", "abc", "8GiB", "2KiB"} {
		f.Add(uint8(i), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, val string) {
		name := fuzzedFlags[int(which)%len(fuzzedFlags)]
		r := &runFlags{}
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fs.SetOutput(discard{})
		r.register(fs)
		if err := fs.Parse([]string{"--" + name + "=" + val}); err != nil {
			return // cobra reports it as bad input (SetFlagErrorFunc)
		}
		err := r.check()
		if err == nil {
			_, err = r.sourceIDs()
		}
		if err == nil {
			return
		}
		if exitCode(err) != ExitBadInput {
			t.Fatalf("--%s=%q: %v is not bad input (exit %d)", name, val, err, exitCode(err))
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "--"+name) {
			t.Fatalf("--%s=%q: message %q is not one line naming the flag", name, val, msg)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
