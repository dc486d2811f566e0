package balance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkg/errors"
)

// seq returns n single-vertex tasks 0..n-1.
func seq(n int) []Task {
	ts := make([]Task, n)
	for i := range ts {
		ts[i] = Task{Lo: uint32(i), Hi: uint32(i + 1)}
	}
	return ts
}

func TestDeal(t *testing.T) {
	tests := []struct {
		name    string
		costs   []uint64
		workers int
		want    [][2]int
	}{
		{"even", []uint64{1, 1, 1, 1}, 2, [][2]int{{0, 2}, {2, 4}}},
		{"one worker", []uint64{5, 1}, 1, [][2]int{{0, 2}}},
		{"more workers than tasks", []uint64{1, 1}, 4, [][2]int{{0, 0}, {0, 1}, {1, 1}, {1, 2}}},
		{"heavy first", []uint64{6, 1, 1, 1, 1, 1, 1}, 2, [][2]int{{0, 1}, {1, 7}}},
		{"heavy last", []uint64{1, 1, 1, 1, 1, 1, 6}, 2, [][2]int{{0, 6}, {6, 7}}},
		{"no cost: by count", []uint64{0, 0, 0}, 2, [][2]int{{0, 1}, {1, 3}}},
		{"no tasks", nil, 3, [][2]int{{0, 0}, {0, 0}, {0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deal(tt.costs, tt.workers)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("deal = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTailRatio(t *testing.T) {
	ms := func(xs ...int) Stats {
		s := Stats{}
		for _, x := range xs {
			s.Busy = append(s.Busy, time.Duration(x)*time.Millisecond)
		}
		return s
	}
	tests := []struct {
		name string
		s    Stats
		want float64
	}{
		{"no workers", ms(), 1},
		{"one worker", ms(7), 1},
		{"idle", ms(0, 0, 0), 1},
		{"even", ms(5, 5, 5), 1},
		{"odd count", ms(2, 4, 8), 2},
		{"even count: mean of middle two", ms(2, 4, 6, 10), 2},
		{"median zero: max over mean", ms(0, 0, 9), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.TailRatio(); got != tt.want {
				t.Fatalf("TailRatio = %g, want %g", got, tt.want)
			}
		})
	}
}

func TestStatsAdd(t *testing.T) {
	var s Stats
	s.Add(Stats{Busy: []time.Duration{1, 2}, Tasks: []int{1, 1}, Steals: []int{0, 1}, Stolen: []int{0, 3}, Wall: 5})
	s.Add(Stats{Busy: []time.Duration{3, 4}, Tasks: []int{2, 0}, Steals: []int{1, 0}, Stolen: []int{2, 0}, Wall: 5})
	want := Stats{Busy: []time.Duration{4, 6}, Tasks: []int{3, 1}, Steals: []int{1, 1}, Stolen: []int{2, 3}, Wall: 10}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("sum = %+v, want %+v", s, want)
	}
	if s.TotalSteals() != 2 {
		t.Fatalf("TotalSteals = %d", s.TotalSteals())
	}
}

// TestRunShares checks, without stealing, that every worker runs exactly its
// dealt share, in order.
func TestRunShares(t *testing.T) {
	tests := []struct {
		name    string
		workers int
		n       int
		cost    func(Task) uint64
		want    [][]uint32 // vertices each worker ran, in order
	}{
		{"one worker", 1, 3, nil, [][]uint32{{0, 1, 2}}},
		{"two even", 2, 4, nil, [][]uint32{{0, 1}, {2, 3}}},
		{"heavy first", 2, 4, func(t Task) uint64 { return map[uint32]uint64{0: 3}[t.Lo] + 1 }, [][]uint32{{0}, {1, 2, 3}}},
		{"idle worker", 3, 2, nil, [][]uint32{{0}, {}, {1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([][]uint32, tt.workers)
			for w := range got {
				got[w] = []uint32{}
			}
			st, err := Run(tt.workers, seq(tt.n), tt.cost, false, func(w int, tk Task) error {
				got[w] = append(got[w], tk.Lo)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ran %v, want %v", got, tt.want)
			}
			for w := range got {
				if st.Tasks[w] != len(got[w]) || st.Steals[w] != 0 {
					t.Fatalf("stats %+v do not match %v", st, got)
				}
			}
		})
	}
}

func TestRunArguments(t *testing.T) {
	if _, err := Run(0, seq(1), nil, true, func(int, Task) error { return nil }); err == nil {
		t.Error("0 workers accepted")
	}
	if _, err := Run(2, seq(1), nil, true, nil); err == nil {
		t.Error("nil function accepted")
	}
	st, err := Run(3, nil, nil, true, func(int, Task) error { t.Error("ran a task of none"); return nil })
	if err != nil || len(st.Busy) != 3 {
		t.Fatalf("no tasks: %+v, %v", st, err)
	}
}

// Every task runs exactly once, whatever the costs, workers and stealing.
func TestRunExactlyOnceProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 60 {
		n, workers, steal := r.IntN(400), 1+r.IntN(6), i%3 != 0
		costs := make([]uint64, n)
		for k := range costs {
			costs[k] = uint64(r.IntN(50)) * uint64(r.IntN(3)) // many zero costs too
		}
		t.Run(fmt.Sprintf("n=%d,w=%d,steal=%v", n, workers, steal), func(t *testing.T) {
			runs := make([]atomic.Int32, n)
			st, err := Run(workers, seq(n), func(tk Task) uint64 { return costs[tk.Lo] }, steal, func(w int, tk Task) error {
				runs[tk.Lo].Add(1)
				if costs[tk.Lo] > 40 {
					time.Sleep(20 * time.Microsecond) // make real imbalance
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for w := range workers {
				total += st.Tasks[w]
			}
			if total != n {
				t.Fatalf("stats count %d tasks, want %d", total, n)
			}
			for k := range runs {
				if c := runs[k].Load(); c != 1 {
					t.Fatalf("task %d ran %d times", k, c)
				}
			}
			if !steal && st.TotalSteals() != 0 {
				t.Fatalf("%d steals with stealing off", st.TotalSteals())
			}
		})
	}
}

// One huge task dealt to worker 0 before many small ones: with stealing the
// others run everything else while it is busy; without, its share waits.
func TestRunStealsFromBusyWorker(t *testing.T) {
	const n, workers = 64, 4
	for _, tc := range []struct {
		steal bool
		wait  time.Duration
	}{{true, 10 * time.Second}, {false, 200 * time.Millisecond}} {
		t.Run(fmt.Sprint("steal=", tc.steal), func(t *testing.T) {
			var done atomic.Int32
			var hugeW atomic.Int32
			huge := make(chan struct{})
			var once sync.Once
			// The cost model believes every task equal, so worker 0's share
			// is tasks 0..15; task 0 does not end until the rest are done.
			st, err := Run(workers, seq(n), nil, tc.steal, func(w int, tk Task) error {
				if tk.Lo == 0 {
					hugeW.Store(int32(w))
					select {
					case <-huge:
						return nil
					case <-time.After(tc.wait):
						return errors.New("the other workers did not take the rest")
					}
				}
				if done.Add(1) == n-1 {
					once.Do(func() { close(huge) })
				}
				return nil
			})
			if !tc.steal {
				if err == nil {
					t.Fatal("without stealing the huge task's share still finished")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.TotalSteals() == 0 {
				t.Error("no steals")
			}
			if hw := hugeW.Load(); hw == 0 && st.Tasks[0] != 1 {
				t.Errorf("worker 0 ran %d tasks, want only the huge one", st.Tasks[0])
			}
		})
	}
}

func TestRunStopsOnFirstError(t *testing.T) {
	for _, steal := range []bool{false, true} {
		t.Run(fmt.Sprint("steal=", steal), func(t *testing.T) {
			boom := errors.New("boom")
			var ran atomic.Int32
			_, err := Run(4, seq(10000), nil, steal, func(w int, tk Task) error {
				ran.Add(1)
				if tk.Lo == 3 {
					return boom
				}
				time.Sleep(10 * time.Microsecond)
				return nil
			})
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v, want boom", err)
			}
			if n := ran.Load(); n > 2000 {
				t.Fatalf("%d tasks ran after the error; want a prompt stop", n)
			}
		})
	}
}

// BenchmarkRun measures the scheduler's overhead per task with empty task
// functions: ns/op is per task.
func BenchmarkRun(b *testing.B) {
	const n = 4096
	tasks := seq(n)
	for _, workers := range []int{1, 2, 4} {
		for _, steal := range []bool{false, true} {
			b.Run(fmt.Sprintf("workers=%d,steal=%v", workers, steal), func(b *testing.B) {
				for b.Loop() {
					if _, err := Run(workers, tasks, nil, steal, func(int, Task) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
			})
		}
	}
}

// BenchmarkRunSkewed has all cost on one share, so stealing does the work.
func BenchmarkRunSkewed(b *testing.B) {
	const n = 4096
	tasks := seq(n)
	cost := func(t Task) uint64 {
		if t.Lo == 0 {
			return n
		}
		return 1
	}
	for b.Loop() {
		if _, err := Run(4, tasks, cost, true, func(int, Task) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
}

func TestTailOverPhases(t *testing.T) {
	ph := func(xs ...time.Duration) Stats { return Stats{Busy: xs} }
	tests := []struct {
		name   string
		phases []Stats
		want   float64
	}{
		{"none", nil, 1},
		{"one worker", []Stats{ph(5), ph(9)}, 1},
		{"idle", []Stats{ph(0, 0)}, 1},
		{"tails in different workers do not cancel", []Stats{ph(1, 1, 3), ph(3, 1, 1)}, 3},
		{"weighted by time", []Stats{ph(2, 2, 2), ph(10, 20, 30)}, 32.0 / 22},
		{"zero median uses the mean", []Stats{ph(0, 0, 6)}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tail(tt.phases); math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("Tail = %g, want %g", got, tt.want)
			}
		})
	}
	s := ph(4, 1, 2, 8)
	if s.MaxBusy() != 8 || s.MedianBusy() != 3 {
		t.Fatalf("MaxBusy %v MedianBusy %v, want 8 and 3", s.MaxBusy(), s.MedianBusy())
	}
}
