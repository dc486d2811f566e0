package fabric

import (
	"slices"
	"testing"
	"time"
)

func TestClients(t *testing.T) {
	const self = 100
	dead := func(name string) bool { return name == "dmgjob-300-7-ep0" || name == "dmgjob-400-7-ep0" }
	for _, c := range []struct {
		name string
		maps string
		want []client
	}{
		{"nothing mapped", "7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/libc.so.6\n", nil},
		{"own region left out",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-100-9-ep0\n", nil},
		{"live client",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-200-9-ep3\n", []client{{name: "dmgjob-200-9-ep3"}}},
		{"closed client (deleted)",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-200-9-ep3 (deleted)\n", []client{{name: "dmgjob-200-9-ep3", gone: true}}},
		{"dead client",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-300-7-ep0\n", []client{{name: "dmgjob-300-7-ep0", dead: true}}},
		{"dead client whose file another job removed",
			"7f00-7f10 rw-s 00000000 00:1a 5 /dev/shm/dmgjob-400-7-ep0 (deleted)\n", []client{{name: "dmgjob-400-7-ep0", gone: true, dead: true}}},
		{"each once, in order",
			"a-b rw-s 0 00:1a 5 /dev/shm/dmgjob-300-7-ep0\n" +
				"c-d rw-s 0 00:1a 6 /dev/shm/dmgjob-200-9-ep1 (deleted)\n" +
				"e-f rw-s 0 00:1a 5 /dev/shm/dmgjob-300-7-ep0\n",
			[]client{{name: "dmgjob-300-7-ep0", dead: true}, {name: "dmgjob-200-9-ep1", gone: true}}},
		{"a cxl pool or a user's file is not an endpoint",
			"a-b rw-s 0 00:1a 5 /dev/shm/dmgjob-200-9-pool0 (deleted)\n" +
				"c-d rw-s 0 00:1a 6 /dev/shm/dmg-2024-results.csv (deleted)\n" +
				"e-f rw-s 0 00:1a 7 /dev/shm/dmgjob-01-9-ep1 (deleted)\n", nil},
		{"another directory", "a-b rw-s 0 00:1a 5 /tmp/dmgjob-200-9-ep0 (deleted)\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := clients([]byte(c.maps), self, dead); !slices.Equal(got, c.want) {
				t.Errorf("clients = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestUnlockNeeded(t *testing.T) {
	stuck := lockLook{locked: 1, dead: 1, spun: 600 * time.Millisecond}
	with := func(f func(*lockLook)) lockLook { l := stuck; f(&l); return l }
	for _, c := range []struct {
		name string
		look lockLook
		want bool
	}{
		{"a dead client's lock, progress idle", stuck, true},
		{"a dead client's lock, progress spinning behind it", with(func(l *lockLook) { l.progress, l.progressSpun = progressSame, 400*time.Millisecond }), true},
		{"the try spun too little CPU (it waited for a core)", with(func(l *lockLook) { l.spun = 100 * time.Millisecond }), false},
		{"the lock was given back during the try", with(func(l *lockLook) { l.released = true }), false},
		{"progress in one call without spinning: it may hold the lock, starved", with(func(l *lockLook) { l.progress, l.progressSpun = progressSame, 10*time.Millisecond }), false},
		{"progress entered a call during the try", with(func(l *lockLook) { l.progress = progressMoved }), false},
		{"lock free at the end", with(func(l *lockLook) { l.locked = 0 }), false},
		{"region unknown (not libfabric 1.17's)", with(func(l *lockLook) { l.locked = -1 }), false},
		{"every client alive: a frozen holder keeps its lock", with(func(l *lockLook) { l.dead = 0 }), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := unlockNeeded(c.look); got != c.want {
				t.Errorf("unlockNeeded(%+v) = %v, want %v", c.look, got, c.want)
			}
		})
	}
}

func TestKeepDeparted(t *testing.T) {
	for _, c := range []struct {
		name   string
		inside time.Duration
		locked int
		want   bool
	}{
		{"progress stuck", 600 * time.Millisecond, 0, true},
		{"lock taken, progress not behind it yet", 0, 1, true},
		{"lock free, progress between calls", 0, 0, false},
		{"region unknown, progress running", 100 * time.Millisecond, -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := keepDeparted(c.inside, c.locked); got != c.want {
				t.Errorf("keepDeparted(%v, %d) = %v, want %v", c.inside, c.locked, got, c.want)
			}
		})
	}
}
