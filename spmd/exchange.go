package spmd

import "fmt"

// PeerError is what Exchange returns on every other rank when a rank
// passed an error: which rank, and its error's text.
type PeerError struct {
	Rank int
	Msg  string
}

func (e *PeerError) Error() string { return fmt.Sprintf("rank %d failed: %s", e.Rank, e.Msg) }

// Exchange is one step of a collective phase that can fail on any rank:
// an all-gather of every rank's payload that carries its error too. Each
// rank passes its error (nil if it has none) and its payload, and gets
// every rank's payload in rank order; or, when some rank passed an
// error, the lowest such rank's: its own error on that rank, a
// *PeerError on the others. A failed all-gather returns its error as is.
func Exchange(c Comm, err error, payload []byte) ([][]byte, error) {
	msg := make([]byte, 1, 1+len(payload))
	if err != nil {
		msg[0] = 1
		msg = append(msg, err.Error()...)
	} else {
		msg = append(msg, payload...)
	}
	all, cerr := c.AllGather(msg)
	if cerr != nil {
		return nil, cerr
	}
	for r, m := range all {
		if len(m) > 0 && m[0] == 1 {
			if r == c.Rank() {
				return nil, err
			}
			return nil, &PeerError{Rank: r, Msg: string(m[1:])}
		}
	}
	for r := range all {
		all[r] = all[r][1:]
	}
	return all, nil
}
