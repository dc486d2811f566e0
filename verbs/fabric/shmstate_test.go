package fabric

import (
	"strings"
	"testing"
	"time"
)

func TestQueueWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type look struct {
		at    time.Duration // after t0
		taken uint64        // commands taken so far
		cmds  int64         // queued now
		want  string        // a substring of the note; "" for none
	}
	for _, c := range []struct {
		name  string
		looks []look
	}{
		{"an idle queue says nothing", []look{{0, 5, 0, ""}, {4 * time.Second, 5, 0, ""}, {9 * time.Second, 5, 0, ""}}},
		{"a busy queue that moves says nothing", []look{{0, 5, 3, ""}, {2 * time.Second, 9, 2, ""}, {4 * time.Second, 12, 1, ""}, {6 * time.Second, 20, 4, ""}}},
		{"commands untaken are said once, after 3 s", []look{
			{0, 5, 1, ""}, {2 * time.Second, 5, 1, ""}, {3 * time.Second, 5, 1, "1 command queued and none taken for 3s: queue lock"},
			{4 * time.Second, 5, 2, ""}, {8 * time.Second, 5, 2, ""}}},
		{"a stuck queue that moves again says so", []look{
			{0, 5, 2, ""}, {5 * time.Second, 5, 2, "2 commands queued and none taken for 5s"}, {6 * time.Second, 7, 0, "moves again after 6s"},
			{7 * time.Second, 7, 0, ""}}},
		{"an empty queue counts as moved: time runs from the last look that saw it so", []look{
			{0, 5, 2, ""}, {2 * time.Second, 5, 0, ""}, {4 * time.Second, 5, 1, ""}, {6 * time.Second, 5, 1, "none taken for 4s"}, {7 * time.Second, 5, 1, ""}}},
		{"the first look primes", []look{{0, 5, 1, ""}, {1 * time.Second, 5, 1, ""}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var w queueWatch
			for i, l := range c.looks {
				got := w.look(shmState{lock: 1, cmdsTaken: l.taken, cmds: l.cmds, credits: 1000}, t0.Add(l.at))
				if l.want == "" && got != "" || l.want != "" && !strings.Contains(got, l.want) {
					t.Errorf("look %d at %v: %q; want %q", i, l.at, got, l.want)
				}
			}
		})
	}
}

func TestShmStateText(t *testing.T) {
	for _, c := range []struct {
		s    shmState
		want string
	}{
		{shmState{lock: 0, taken: 64, looks: 64, cmds: 1, credits: 1022, cmdsTaken: 40}, "queue lock taken (word 0; taken at 64 of 64 looks over 9 ms), 1 command queued (40 taken so far), 1022 credits, signal 0"},
		{shmState{lock: 1, taken: 3, looks: 64, cmds: 0, credits: 1024}, "queue lock busy (word 1; taken at 3 of 64 looks over 9 ms), 0 commands queued"},
		{shmState{lock: 1, looks: 64, cmds: -1}, "queue lock free (word 1; taken at 0 of 64 looks over 9 ms), commands unreadable"},
		{shmState{lock: -1, cmds: 2}, "queue lock taken (word -1), 2 commands queued"},
		{shmState{lock: 1, cmds: 2}, "queue lock free (word 1), 2 commands queued"},
	} {
		if got := c.s.String(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: %q; want it to begin %q", c.s, got, c.want)
		}
	}
}
