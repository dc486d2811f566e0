package verbs_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

func TestAddr(t *testing.T) {
	for _, c := range []struct {
		mn   int
		off  uint64
		ok   bool
		want string
	}{
		{0, 0, true, "mn0+0x0"},
		{3, 0x1f40, true, "mn3+0x1f40"},
		{verbs.MaxMN, verbs.MaxOffset, true, "mn65535+0xffffffffffff"},
		{-1, 0, false, ""},
		{verbs.MaxMN + 1, 0, false, ""},
		{0, verbs.MaxOffset + 1, false, ""},
	} {
		a, err := verbs.MakeAddr(c.mn, c.off)
		if (err == nil) != c.ok {
			t.Errorf("MakeAddr(%d, %#x) error %v, want ok=%v", c.mn, c.off, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		if a.MN() != c.mn || a.Offset() != c.off || a.String() != c.want {
			t.Errorf("MakeAddr(%d, %#x) = %v (mn %d off %#x), want %s", c.mn, c.off, a, a.MN(), a.Offset(), c.want)
		}
	}
}

func TestCheckRange(t *testing.T) {
	sizes := []uint64{64, 0, 16}
	addr := func(mn int, off uint64) verbs.Addr { a, _ := verbs.MakeAddr(mn, off); return a }
	for _, c := range []struct {
		a      verbs.Addr
		n      int
		atomic bool
		ok     bool
	}{
		{addr(0, 0), 64, false, true},
		{addr(0, 63), 1, false, true},
		{addr(0, 64), 0, false, true},
		{addr(0, 64), 1, false, false},
		{addr(0, 65), 0, false, false},
		{addr(1, 0), 0, false, true},
		{addr(1, 0), 1, false, false},
		{addr(3, 0), 0, false, false},
		{addr(0, 0), -1, false, false},
		{addr(0, verbs.MaxOffset), 2, false, false},
		{addr(2, 8), 8, true, true},
		{addr(2, 12), 8, true, false},
		{addr(2, 16), 8, true, false},
	} {
		var err error
		if c.atomic {
			err = verbs.CheckAtomic(sizes, c.a)
		} else {
			err = verbs.CheckRange(sizes, c.a, c.n)
		}
		if (err == nil) != c.ok {
			t.Errorf("check %v len %d atomic=%v: %v, want ok=%v", c.a, c.n, c.atomic, err, c.ok)
		}
		var re *verbs.RangeError
		if err != nil && (!errors.As(err, &re) || !strings.HasPrefix(err.Error(), "verbs: ")) {
			t.Errorf("check %v: error %q is not a verbs *RangeError", c.a, err)
		}
	}
}

func TestCountersRoundTrip(t *testing.T) {
	c := verbs.Counters{Reads: 1, Writes: 2, CAS: 3, FAA: 4, BytesRead: 5, BytesWritten: 6, Doorbells: 7, RoundTrips: 8}
	if got := verbs.CountersFromInt64s(c.Int64s()); got != c {
		t.Fatalf("Int64s round trip: %+v, want %+v", got, c)
	}
	var sum verbs.Counters
	sum.Add(c)
	sum.Add(c)
	if sum.Sub(c) != c || sum.Ops() != 20 || c.Bytes() != 5+6+8*7 {
		t.Fatalf("Add/Sub/Ops/Bytes wrong: %+v", sum)
	}
	tl := verbs.NewTally(2)
	tl.AddBatch([]verbs.Counters{{Reads: 2, BytesRead: 16}, {FAA: 1}})
	tl.AddBatch([]verbs.Counters{{}, {Writes: 1, BytesWritten: 3}})
	tl.AddBatch([]verbs.Counters{{}, {}})
	want := verbs.Counters{Reads: 2, Writes: 1, FAA: 1, BytesRead: 16, BytesWritten: 3, Doorbells: 3, RoundTrips: 2}
	if got := tl.Total(); got != want {
		t.Fatalf("tally total %+v, want %+v", got, want)
	}
	if by := tl.ByMN(); by[1].Doorbells != 2 || by[0].RoundTrips != 1 {
		t.Fatalf("tally by MN %+v", by)
	}
}

func TestParseProfile(t *testing.T) {
	for _, c := range []struct {
		in   string
		ok   bool
		want verbs.Profile
	}{
		{"", true, verbs.DefaultProfile},
		{"cx5-100g", true, verbs.DefaultProfile},
		{"lat=1.5us,iops=100M,bw=12.5GB/s", true, verbs.Profile{Name: "cx5-100g+custom", Latency: 1500 * time.Nanosecond,
			IOPSPerQP: 10e6, IOPSPerNIC: 100e6, Bandwidth: 12.5e9}},
		{"cx5-100g,qpiops=2M,bw=1GiB", true, verbs.Profile{Name: "cx5-100g+custom", Latency: 2 * time.Microsecond,
			IOPSPerQP: 2e6, IOPSPerNIC: 35e6, Bandwidth: 1 << 30}},
		{"cxl-x16", true, verbs.CXLProfile},
		{"cxl-x16,bw=32GB/s", true, verbs.Profile{Name: "cxl-x16+custom", Latency: 300 * time.Nanosecond,
			IOPSPerQP: 50e6, IOPSPerNIC: 1e9, Bandwidth: 32e9}},
		{"nosuchnic", false, verbs.Profile{}},
		{"lat=fast", false, verbs.Profile{}},
		{"iops=0", false, verbs.Profile{}},
		{"speed=3", false, verbs.Profile{}},
	} {
		got, err := verbs.ParseProfile(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseProfile(%q) error %v, want ok=%v", c.in, err, c.ok)
			continue
		}
		if c.ok && got != c.want {
			t.Errorf("ParseProfile(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestProfileTime(t *testing.T) {
	p := verbs.Profile{Name: "t", Latency: time.Microsecond, IOPSPerQP: 1e6, IOPSPerNIC: 2e6, Bandwidth: 1e9}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, b) }
	// One endpoint: 10 round trips, 100 reads of 1000 B.
	ep := verbs.Counters{Reads: 100, BytesRead: 100e3, RoundTrips: 10, Doorbells: 10}
	if got, want := p.EndpointTime(ep), 10e-6+100/1e6+100e3/1e9; !near(got, want) {
		t.Fatalf("EndpointTime = %g, want %g", got, want)
	}
	// Four endpoints on CN 0, all to MN 0: the MN NIC (400 ops at 2M/s +
	// bytes) is slower than any endpoint; CN 0's NIC ties with it and is
	// seen first.
	var loads []verbs.EndpointLoad
	for range 4 {
		loads = append(loads, verbs.EndpointLoad{CN: 0, Total: ep, PerMN: []verbs.Counters{ep}})
	}
	m := p.Time(loads)
	if want := 400/2e6 + 400e3/1e9; !near(m.Seconds, want) || m.Bottleneck != "cn 0 nic" {
		t.Fatalf("Time = %+v, want %g bound by cn 0 nic", m, want)
	}
	// Spread over two CNs and two MNs the endpoints bound the time.
	loads = loads[:0]
	for i := range 4 {
		per := make([]verbs.Counters, 2)
		per[i%2] = ep
		loads = append(loads, verbs.EndpointLoad{CN: i % 2, Total: ep, PerMN: per})
	}
	if m := p.Time(loads); !near(m.Seconds, 200/2e6+200e3/1e9) {
		t.Fatalf("balanced Time = %+v", m)
	}
	if m := p.Time(nil); m.Seconds != 0 {
		t.Fatalf("Time(nil) = %+v", m)
	}
}

// TestBenchMemfab runs Bench on the in-process backend and checks the
// table, the JSON and the counters.
func TestBenchMemfab(t *testing.T) {
	cluster := memfab.NewCluster()
	roles := spmd.Roles{CN: 1, MN: 1}
	var res verbs.BenchResult
	err := spmd.RunLocal(2, func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		net, err := memfab.Open(cluster, w, verbs.Config{PoolBytes: 1 << 16})
		if err != nil {
			return err
		}
		if w.Role == spmd.CN {
			ep, err := net.NewEndpoint()
			if err != nil {
				return err
			}
			base, _ := verbs.MakeAddr(0, 0)
			res, err = verbs.Bench(ep, verbs.BenchConfig{Base: base, Span: 1 << 16, Duration: time.Millisecond})
			if err != nil {
				return err
			}
			if _, err := verbs.Bench(ep, verbs.BenchConfig{Base: base, Span: 4, Duration: time.Millisecond}); err == nil {
				return errors.New("Bench accepted a 4-byte span")
			}
		}
		return net.Close()
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
	// memfab has no PostMode: 4 sizes x 4 batches of reads, 4 batches each of CAS and FAA.
	if len(res.Rows) != 16+8 {
		t.Fatalf("%d rows, want 24", len(res.Rows))
	}
	var ops uint64
	for _, r := range res.Rows {
		if r.Ops == 0 || r.Ops%uint64(r.Batch) != 0 || r.OpsPerSec <= 0 {
			t.Errorf("row %+v", r)
		}
		ops += r.Ops
	}
	if res.Counters.Ops() < ops || res.Counters.Ops() > ops+2*128*24 {
		t.Errorf("counters %d ops, rows %d ops (+ warm-up)", res.Counters.Ops(), ops)
	}
	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "4.0 KiB") || !strings.Contains(buf.String(), "faa") {
		t.Errorf("table:\n%s", buf.String())
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatal(err)
	}
}
