package fabric

import (
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// TestSetPeersNames: an shm address is a NUL-terminated name whose
// length varies with its MN's pid and start time (a CI run failed on
// MNs of 23- and 25-byte names); other providers' addresses have one
// size, and a size that differs is an error.
func TestSetPeersNames(t *testing.T) {
	for _, c := range []struct {
		provider string
		names    []string
		err      string // part of the error, "" for none
	}{
		{"shm", []string{"dmgjob-9999-77-ep0\x00", "dmgjob-10000-101-ep0\x00"}, ""},
		{"shm", []string{"dmgjob-1-2-ep0\x00", "dmgjob-1-2-ep1"}, "not one name"},
		{"shm", []string{"dmg\x00job\x00"}, "not one name"},
		{"tcp;ofi_rxm", []string{"0123456789abcdef", "fedcba9876543210"}, ""},
		{"tcp;ofi_rxm", []string{"0123456789abcdef", "0123456789abcdef01"}, "18-byte fabric address but MN 0 a 16-byte one"},
	} {
		pools := make([]verbs.PoolAddr, len(c.names))
		for i, name := range c.names {
			pools[i] = verbs.PoolAddr{Size: 1 << 20, Name: []byte(name)}
		}
		n := &Network{w: &spmd.World{Role: spmd.MN}, provider: c.provider}
		err := n.setPeers(pools)
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %q: %v; want an error with %q", c.provider, c.names, err, c.err)
		}
	}
}
