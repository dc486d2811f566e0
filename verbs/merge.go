package verbs

import (
	"slices"

	"github.com/pkg/errors"
)

// RangeChecker checks an address range; Network implements it.
type RangeChecker interface {
	Check(a Addr, n int) error
}

// ReadMerger queues reads for an Endpoint and, at Flush, joins reads of
// adjacent or overlapping remote ranges (or ranges at most MaxGap bytes
// apart) on the same MN into one READ, then scatters the data into the
// callers' buffers. Other operations may be queued on the endpoint directly
// between merger calls; they go out with the merger's Flush.
//
// A read queued with ReadView is not copied anywhere: its caller looks at
// the data in the merger's own buffer (View), which on an endpoint with
// registered buffers (BufferAllocator) is where the READ lands.
//
// Like an Endpoint, a ReadMerger is used by one goroutine at a time.
type ReadMerger struct {
	ep     Endpoint
	alloc  BufferAllocator // nil: buf is Go memory
	check  RangeChecker
	maxGap uint64
	maxLen uint64
	reqs   []mergeReq
	runs   []mergeRun
	buf    []byte
	saved  uint64
	group  int
	// views are the ReadViews queued since the last Flush; done those of
	// the last Flush, which View reads.
	views, done []viewAt
}

type mergeReq struct {
	dst   []byte // nil for a view
	src   Addr
	n     int
	group int32
	view  int32 // index in views, -1 for a read into dst
}

type mergeRun struct {
	start, end Addr // [start, end) on one MN
	first, n   int  // reqs[first:first+n]
	bufOff     int  // offset in buf, -1 if read directly
	view       bool // a view needs the run in buf
}

// viewAt is where a view's data lies in buf.
type viewAt struct{ off, n int }

// NewReadMerger returns a merger over ep. Reads at most maxGap bytes apart
// are joined (0: only adjacent or overlapping ones), and no joined read
// exceeds maxLen bytes (0: no limit). check (usually the Network) validates
// each read when it is queued.
func NewReadMerger(ep Endpoint, check RangeChecker, maxGap, maxLen int) (*ReadMerger, error) {
	if ep == nil || check == nil {
		return nil, errors.New("verbs: NewReadMerger needs an endpoint and a range checker")
	}
	if maxGap < 0 || maxLen < 0 {
		return nil, errors.Errorf("verbs: merge gap %d and length %d must be non-negative", maxGap, maxLen)
	}
	ml := uint64(maxLen)
	if maxLen == 0 {
		ml = MaxOffset + 1
	}
	// Room for a typical batch up front, so a merger reaches its high-water
	// mark within the first iterations, not over a job.
	const batch = 256
	m := &ReadMerger{ep: ep, check: check, maxGap: uint64(maxGap), maxLen: ml,
		reqs: make([]mergeReq, 0, batch), runs: make([]mergeRun, 0, batch)}
	m.alloc, _ = ep.(BufferAllocator)
	return m, nil
}

// Read queues a read of len(dst) bytes at src; dst is filled by Flush.
func (m *ReadMerger) Read(dst []byte, src Addr) error {
	if err := m.check.Check(src, len(dst)); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	m.reqs = append(m.reqs, mergeReq{dst: dst, src: src, n: len(dst), group: int32(m.group), view: -1})
	return nil
}

// ReadView queues a read of n bytes at src and returns its handle for
// View. Handles count from 0 after each Flush.
func (m *ReadMerger) ReadView(src Addr, n int) (int, error) {
	if err := m.check.Check(src, n); err != nil {
		return 0, err
	}
	h := len(m.views)
	m.views = append(m.views, viewAt{})
	if n > 0 {
		m.reqs = append(m.reqs, mergeReq{src: src, n: n, group: int32(m.group), view: int32(h)})
	}
	return h, nil
}

// View is the data of ReadView h, queued before the last Flush. It stays
// valid until the next Flush; the caller must not keep or modify it.
func (m *ReadMerger) View(h int) []byte {
	v := m.done[h]
	return m.buf[v.off : v.off+v.n : v.off+v.n]
}

// Separate keeps the reads queued so far from being merged with those
// queued after (until Flush): a caller reading from distinct regions of a
// pool, whose gaps hold data that other ranks update meanwhile, reads none
// of the gap.
func (m *ReadMerger) Separate() { m.group++ }

// Pending is the number of reads queued since the last Flush.
func (m *ReadMerger) Pending() int { return len(m.reqs) }

// Saved is the number of READs merging has avoided so far.
func (m *ReadMerger) Saved() uint64 { return m.saved }

// Flush merges the queued reads, posts them with everything else queued on
// the endpoint, waits (Endpoint.Flush) and scatters the data.
func (m *ReadMerger) Flush() error {
	defer m.reset()
	if len(m.reqs) == 0 {
		m.done, m.views = m.views, m.done[:0] // empty views only
		return m.ep.Flush()
	}
	// Callers mostly queue in address order (a task's entries, then its
	// lists): sort only when they did not. Requests of one address may end
	// in any order: each gets its own copy.
	if !slices.IsSortedFunc(m.reqs, reqOrder) {
		slices.SortFunc(m.reqs, reqOrder)
	}
	m.runs = m.runs[:0]
	for i, r := range m.reqs {
		end := r.src.Add(uint64(r.n))
		if n := len(m.runs); n > 0 {
			cur := &m.runs[n-1]
			newEnd := max(cur.end, end)
			if r.group == m.reqs[cur.first].group && r.src.MN() == cur.start.MN() && uint64(r.src) <= uint64(cur.end)+m.maxGap &&
				uint64(newEnd-cur.start) <= m.maxLen {
				cur.end = newEnd
				cur.n++
				cur.view = cur.view || r.view >= 0
				continue
			}
		}
		m.runs = append(m.runs, mergeRun{start: r.src, end: end, first: i, n: 1, bufOff: -1, view: r.view >= 0})
	}
	total := 0
	for i := range m.runs {
		if r := &m.runs[i]; r.n > 1 || r.view {
			total = (total + 7) &^ 7 // views of words stay aligned
			r.bufOff = total
			total += int(r.end - r.start)
		}
	}
	if err := m.grow(total); err != nil {
		return err
	}
	for _, r := range m.runs {
		var err error
		if r.bufOff < 0 {
			q := m.reqs[r.first]
			err = m.ep.Read(q.dst, q.src)
		} else {
			err = m.ep.Read(m.buf[r.bufOff:r.bufOff+int(r.end-r.start)], r.start)
			m.saved += uint64(r.n - 1)
		}
		if err != nil {
			return err
		}
	}
	if err := m.ep.Flush(); err != nil {
		return err
	}
	for _, r := range m.runs {
		if r.bufOff < 0 {
			continue
		}
		for _, q := range m.reqs[r.first : r.first+r.n] {
			off := r.bufOff + int(q.src-r.start)
			if q.view >= 0 {
				m.views[q.view] = viewAt{off: off, n: q.n}
			} else {
				copy(q.dst, m.buf[off:off+q.n])
			}
		}
	}
	m.done, m.views = m.views, m.done[:0]
	return nil
}

// grow makes buf hold at least n bytes: registered memory when the
// endpoint has it (the old buffer is no longer read: every view of it
// ended with the Flush that grows it).
func (m *ReadMerger) grow(n int) error {
	if cap(m.buf) >= n {
		m.buf = m.buf[:n]
		return nil
	}
	size := max(n, 2*cap(m.buf), 64<<10)
	if m.alloc == nil {
		m.buf = make([]byte, n, size)
		return nil
	}
	if cap(m.buf) > 0 {
		if err := m.alloc.FreeBuffer(m.buf[:cap(m.buf)]); err != nil {
			return err
		}
		m.buf = nil
	}
	b, err := m.alloc.AllocBuffer(size)
	if err != nil {
		return err
	}
	m.buf = b[:n]
	return nil
}

// reqOrder orders reads by group, then address.
func reqOrder(a, b mergeReq) int {
	switch {
	case a.group != b.group:
		return int(a.group - b.group)
	case a.src < b.src:
		return -1
	case a.src > b.src:
		return 1
	}
	return 0
}

func (m *ReadMerger) reset() {
	clear(m.reqs)
	m.reqs = m.reqs[:0]
	m.views = m.views[:0]
	m.group = 0
}
