package fabric

import (
	"slices"
	"testing"
)

func TestDeparted(t *testing.T) {
	const self = 100
	dead := func(name string) bool { return name == "dmgjob-300-7-ep0" }
	for _, c := range []struct {
		name string
		maps string
		want []string
	}{
		{"nothing mapped", "7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/libc.so.6\n", nil},
		{"own region kept",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-100-9-ep0\n", nil},
		{"live client kept",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-200-9-ep3\n", nil},
		{"closed client (deleted) departs",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-200-9-ep3 (deleted)\n", []string{"dmgjob-200-9-ep3"}},
		{"dead client departs",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-300-7-ep0\n", []string{"dmgjob-300-7-ep0"}},
		{"each once, in order",
			"a-b rw-s 0 00:1a 5 /dev/shm/dmgjob-300-7-ep0\n" +
				"c-d rw-s 0 00:1a 6 /dev/shm/dmgjob-200-9-ep1 (deleted)\n" +
				"e-f rw-s 0 00:1a 5 /dev/shm/dmgjob-300-7-ep0\n",
			[]string{"dmgjob-300-7-ep0", "dmgjob-200-9-ep1"}},
		{"a cxl pool or a user's file is not an endpoint",
			"a-b rw-s 0 00:1a 5 /dev/shm/dmgjob-200-9-pool0 (deleted)\n" +
				"c-d rw-s 0 00:1a 6 /dev/shm/dmg-2024-results.csv (deleted)\n" +
				"e-f rw-s 0 00:1a 7 /dev/shm/dmgjob-01-9-ep1 (deleted)\n", nil},
		{"another directory", "a-b rw-s 0 00:1a 5 /tmp/dmgjob-200-9-ep0 (deleted)\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := departed([]byte(c.maps), self, dead); !slices.Equal(got, c.want) {
				t.Errorf("departed = %q, want %q", got, c.want)
			}
		})
	}
}
