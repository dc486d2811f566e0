package heartbeat

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// start opens and starts a beacon for rank self, beating to and watching
// peers.
func start(t *testing.T, self int, timeout time.Duration, silent func([]Silence), peers ...Peer) *Beacon {
	t.Helper()
	b, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Self: self, Host: "here", Token: 42, Beat: 20 * time.Millisecond, Timeout: timeout, Silent: silent}
	if err := b.Start(cfg, nil, peers); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func TestProbeTellsAnsweredRefusedAndSilent(t *testing.T) {
	// Two live beacons that watch each other, a port nobody listens on
	// (a dead process), and a socket that never reads (a frozen one).
	b0, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	b1, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	dead, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	deadAddr := dead.LocalAddr().String()
	dead.Close()
	frozen, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	defer frozen.Close()
	var reports atomic.Int32
	var got []Silence
	cfg := Config{Self: 0, Host: "here", Token: 7, Beat: 20 * time.Millisecond, Timeout: 300 * time.Millisecond,
		Silent: func(s []Silence) { got = s; reports.Add(1) }}
	peers := []Peer{{Rank: 1, Host: "here", Addrs: b1.Addrs()}, {Rank: 2, Host: "here", Addrs: []string{deadAddr}}, {Rank: 3, Host: "here", Addrs: []string{frozen.LocalAddr().String()}}}
	if err := b0.Start(cfg, nil, peers); err != nil {
		t.Fatal(err)
	}
	defer b0.Close()
	cfg1 := cfg
	cfg1.Self, cfg1.Silent = 1, nil
	if err := b1.Start(cfg1, []Peer{{Rank: 0, Host: "here", Addrs: b0.Addrs()}}, nil); err != nil {
		t.Fatal(err)
	}
	defer b1.Close()
	time.Sleep(600 * time.Millisecond)
	if reports.Load() != 1 || len(got) != 2 || got[0].Rank != 2 || got[1].Rank != 3 {
		t.Fatalf("reports %d, silent %+v; want one report naming ranks 2 and 3", reports.Load(), got)
	}
	if s := b0.Silent(200 * time.Millisecond); len(s) != 2 {
		t.Fatalf("Silent = %+v, want ranks 2 and 3", s)
	}
	a := b0.Probe(200 * time.Millisecond)
	want := map[int]Answer{1: Answered, 2: Refused, 3: NoReply}
	for r, w := range want {
		if a[r] != w {
			t.Errorf("rank %d: %v, want %v", r, a[r], w)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if reports.Load() != 1 {
		t.Errorf("%d reports, want one", reports.Load())
	}
}

func TestOtherJobsBeatsIgnored(t *testing.T) {
	var reports atomic.Int32
	b1, _ := Listen()
	defer b1.Close()
	b0 := start(t, 0, 200*time.Millisecond, func([]Silence) { reports.Add(1) }, Peer{Rank: 1, Host: "here", Addrs: b1.Addrs()})
	// b1 beats with another token: b0 must still find rank 1 silent.
	if err := b1.Start(Config{Self: 1, Host: "here", Token: 43, Beat: 20 * time.Millisecond}, []Peer{{Rank: 0, Host: "here", Addrs: b0.Addrs()}}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if reports.Load() != 1 {
		t.Fatalf("%d reports of a peer beating with another job's token, want 1", reports.Load())
	}
}

func TestAddress(t *testing.T) {
	for _, c := range []struct {
		p    Peer
		host string
		want string
	}{
		{Peer{Host: "a", Addrs: []string{"10.0.0.1:5", "127.0.0.1:5"}}, "a", "127.0.0.1:5"},
		{Peer{Host: "a", Addrs: []string{"10.0.0.1:5", "127.0.0.1:5"}}, "b", "10.0.0.1:5"},
		{Peer{Host: "localhost", Addrs: []string{"10.0.0.1:5", "127.0.0.1:5"}}, "b", "10.0.0.1:5"},
		{Peer{Host: "a", Addrs: []string{"127.0.0.1:5"}}, "b", "127.0.0.1:5"},
		{Peer{Host: "a"}, "b", ""},
	} {
		if got := address(c.p, c.host); got != c.want {
			t.Errorf("address(%+v from %s) = %q, want %q", c.p, c.host, got, c.want)
		}
	}
}
