package heartbeat

import (
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	pkgerrors "github.com/pkg/errors"
)

// Kinds of datagram.
const (
	kindBeat = 1
	kindPing = 2
	kindPong = 3
)

const (
	magic   = 0x444d4762 // "DMGb"
	msgSize = 20         // magic u32, kind u8, 3 bytes unused, rank u32, token u64
)

// Peer is where a rank listens: its host's name and its Addrs.
type Peer struct {
	Rank  int
	Host  string
	Addrs []string // "ip:port", from the peer's Beacon.Addrs
}

// Config is what Start needs.
type Config struct {
	Self    int
	Host    string // this rank's host: a peer on it is reached over loopback
	Token   uint64 // the job's: every rank passes the same
	Beat    time.Duration
	Timeout time.Duration // a watched peer silent for this long is reported
	// Silent, if set, is called once, from the beacon's goroutine, with
	// the watched peers silent for Timeout.
	Silent func([]Silence)
}

// Silence is a watched peer that has not been heard from.
type Silence struct {
	Rank int
	For  time.Duration // since its last datagram (or since Start)
}

// Answer is what a probe heard from one peer.
type Answer int

const (
	// Answered: the peer replied.
	Answered Answer = iota
	// Refused: its host said no process listens there: the peer is gone.
	Refused
	// NoReply: nothing came back: its host is cut off, gone, or the peer
	// is frozen.
	NoReply
)

func (a Answer) String() string {
	return [...]string{"answered", "refused", "no reply"}[a]
}

// Beacon is one rank's end.
type Beacon struct {
	conn *net.UDPConn
	cfg  Config

	mu      sync.Mutex
	closed  bool
	watched map[int]*link // ranks this one watches
	beaten  map[int]*link // ranks this one beats to (a superset of watched)
	started time.Time
	ticked  time.Time // the beats' last tick
	stop    chan struct{}
	once    sync.Once
	done    sync.WaitGroup
}

// link is the way to one peer: a socket connected to its address, so
// that an ICMP refusal from its host comes back as an error here.
type link struct {
	rank    int
	conn    *net.UDPConn
	heard   time.Time // its last datagram, or Start
	refused bool
	pong    chan struct{}
}

// Listen opens this rank's beacon on every interface, on a port the
// kernel picks.
func Listen() (*Beacon, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{})
	if err != nil {
		return nil, pkgerrors.Wrap(err, "heartbeat: opening a UDP socket")
	}
	return &Beacon{conn: c, stop: make(chan struct{})}, nil
}

// Addrs is where peers on other hosts can reach this beacon: every
// non-loopback address of the host's interfaces that are up, with the
// port.
func (b *Beacon) Addrs() []string {
	port := strconv.Itoa(b.conn.LocalAddr().(*net.UDPAddr).Port)
	var out []string
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		as, _ := i.Addrs()
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLinkLocalUnicast() {
				out = append(out, net.JoinHostPort(n.IP.String(), port))
			}
		}
	}
	return append(out, net.JoinHostPort("127.0.0.1", port))
}

// address picks the address of peer p to use from host: loopback on the
// same host, else the peer's address its host name resolves to, else its
// first address.
func address(p Peer, host string) string {
	var loop, other []string
	for _, a := range p.Addrs {
		h, _, _ := net.SplitHostPort(a)
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			loop = append(loop, a)
		} else {
			other = append(other, a)
		}
	}
	if p.Host == host && len(loop) > 0 {
		return loop[0]
	}
	if ips, err := net.LookupIP(p.Host); err == nil {
		for _, ip := range ips {
			for _, a := range other {
				if h, _, _ := net.SplitHostPort(a); net.ParseIP(h).Equal(ip) {
					return a
				}
			}
		}
	}
	if len(other) > 0 {
		return other[0]
	}
	if len(loop) > 0 {
		return loop[0]
	}
	return ""
}

// Start beats to the peers in beat and watches those in watch (a peer
// watched is beaten to as well), until Close.
func (b *Beacon) Start(cfg Config, beat, watch []Peer) error {
	b.cfg = cfg
	b.started = time.Now()
	b.watched, b.beaten = map[int]*link{}, map[int]*link{}
	for _, p := range slices.Concat(watch, beat) {
		if _, ok := b.beaten[p.Rank]; ok || p.Rank == cfg.Self {
			continue
		}
		a := address(p, cfg.Host)
		ua, err := net.ResolveUDPAddr("udp", a)
		if err != nil {
			return pkgerrors.Wrapf(err, "heartbeat: rank %d's address %q", p.Rank, a)
		}
		c, err := net.DialUDP("udp", nil, ua)
		if err != nil {
			return pkgerrors.Wrapf(err, "heartbeat: reaching rank %d at %s", p.Rank, a)
		}
		b.beaten[p.Rank] = &link{rank: p.Rank, conn: c, heard: b.started, pong: make(chan struct{}, 1)}
	}
	for _, p := range watch {
		if l, ok := b.beaten[p.Rank]; ok {
			b.watched[p.Rank] = l
		}
	}
	b.done.Add(2 + len(b.beaten))
	go b.receive()
	for _, l := range b.beaten {
		go b.replies(l)
	}
	go b.run()
	return nil
}

func (b *Beacon) msg(kind byte) []byte {
	m := make([]byte, msgSize)
	binary.LittleEndian.PutUint32(m, magic)
	m[4] = kind
	binary.LittleEndian.PutUint32(m[8:], uint32(b.cfg.Self))
	binary.LittleEndian.PutUint64(m[12:], b.cfg.Token)
	return m
}

// parse checks a datagram is this job's and returns its kind and sender.
func (b *Beacon) parse(m []byte) (kind byte, rank int, ok bool) {
	if len(m) != msgSize || binary.LittleEndian.Uint32(m) != magic || binary.LittleEndian.Uint64(m[12:]) != b.cfg.Token {
		return 0, 0, false
	}
	return m[4], int(binary.LittleEndian.Uint32(m[8:])), true
}

// receive takes beats and pings on the listening socket.
func (b *Beacon) receive() {
	defer b.done.Done()
	buf := make([]byte, 64)
	pong := b.msg(kindPong)
	for {
		n, from, err := b.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		kind, rank, ok := b.parse(buf[:n])
		if !ok {
			continue
		}
		switch kind {
		case kindBeat:
			b.mu.Lock()
			if l := b.beaten[rank]; l != nil {
				l.heard, l.refused = time.Now(), false
			}
			b.mu.Unlock()
		case kindPing:
			b.conn.WriteToUDP(pong, from)
		}
	}
}

// replies takes a peer's pongs, and its host's refusals, on its link.
func (b *Beacon) replies(l *link) {
	defer b.done.Done()
	buf := make([]byte, 64)
	for {
		n, err := l.conn.Read(buf)
		switch {
		case errors.Is(err, net.ErrClosed):
			return
		case errors.Is(err, syscall.ECONNREFUSED):
			b.mu.Lock()
			l.refused = true
			b.mu.Unlock()
		case err == nil:
			if kind, rank, ok := b.parse(buf[:n]); ok && kind == kindPong && rank == l.rank {
				b.mu.Lock()
				l.heard, l.refused = time.Now(), false
				b.mu.Unlock()
				select {
				case l.pong <- struct{}{}:
				default:
				}
			}
		}
	}
}

// run beats and watches.
func (b *Beacon) run() {
	defer b.done.Done()
	tick := time.NewTicker(b.cfg.Beat)
	defer tick.Stop()
	beat := b.msg(kindBeat)
	reported := false
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
		}
		b.mu.Lock()
		b.ticked = time.Now()
		b.mu.Unlock()
		for _, l := range b.beaten {
			l.conn.Write(beat) // a refusal comes back to replies
		}
		b.mu.Lock()
		timeout, silent := b.cfg.Timeout, b.cfg.Silent
		b.mu.Unlock()
		if reported || timeout <= 0 || silent == nil {
			continue
		}
		if s := b.Silent(timeout); len(s) > 0 {
			reported = true
			silent(s)
		}
	}
}

// Report sets the timeout and the report of silent peers (Config.Timeout
// and Config.Silent) of a started beacon.
func (b *Beacon) Report(timeout time.Duration, silent func([]Silence)) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.cfg.Timeout, b.cfg.Silent = timeout, silent
	b.mu.Unlock()
}

// Lagging is how long ago the beacon last beat (since Start, if never):
// far more than a beat means this process itself was frozen, and its
// view of the others is stale.
func (b *Beacon) Lagging() time.Duration {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	last := b.ticked
	if last.IsZero() {
		last = b.started
	}
	return time.Since(last)
}

// Silent lists the watched peers not heard from for at least d, by rank.
func (b *Beacon) Silent(d time.Duration) []Silence {
	if b == nil {
		return nil
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	var s []Silence
	for r, l := range b.watched {
		if since := now.Sub(l.heard); since >= d {
			s = append(s, Silence{Rank: r, For: since})
		}
	}
	slices.SortFunc(s, func(x, y Silence) int { return x.Rank - y.Rank })
	return s
}

// Probe pings every watched peer and waits up to wait for the answers.
func (b *Beacon) Probe(wait time.Duration) map[int]Answer {
	if b == nil || b.watched == nil {
		return nil
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil
	}
	ping := b.msg(kindPing)
	for _, l := range b.watched {
		select { // an old pong does not answer this probe
		case <-l.pong:
		default:
		}
		l.conn.Write(ping)
	}
	deadline := time.Now().Add(wait)
	out := map[int]Answer{}
	for r, l := range b.watched {
		if waitPong(l.pong, time.Until(deadline)) {
			out[r] = Answered
			continue
		}
		b.mu.Lock()
		refused := l.refused
		b.mu.Unlock()
		out[r] = NoReply
		if refused {
			out[r] = Refused
		}
	}
	return out
}

// waitPong says whether a pong comes within d (one already there counts).
func waitPong(pong <-chan struct{}, d time.Duration) bool {
	select {
	case <-pong:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-pong:
		return true
	case <-t.C:
		return false
	}
}

// StopWatching ends the reports (the job is past its last boundary) and
// the beats; the beacon still answers probes until Close.
func (b *Beacon) StopWatching() {
	if b != nil {
		b.once.Do(func() { close(b.stop) })
	}
}

// Close ends everything.
func (b *Beacon) Close() {
	if b == nil {
		return
	}
	b.StopWatching()
	b.conn.Close()
	b.mu.Lock()
	b.closed = true
	for _, l := range b.beaten {
		l.conn.Close()
	}
	b.mu.Unlock()
	b.done.Wait()
}
