package spmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

// Role is what a rank does in a DMG job.
type Role int

const (
	// CN is a compute node: runs the graph kernels, caches its chunk.
	CN Role = iota
	// MN is a memory node: registers a pool, keeps the fabric progressing.
	MN
)

func (r Role) String() string {
	if r == CN {
		return "cn"
	}
	return "mn"
}

// Roles is the role layout of a job: ranks 0..CN-1 are compute nodes,
// ranks CN..CN+MN-1 are memory nodes.
type Roles struct {
	CN, MN int
}

// MaxRanksPerRole bounds each count; global addresses carry a 16-bit MN id.
const MaxRanksPerRole = 1 << 16

// ParseRoles parses "cn:C,mn:M" (either order, each exactly once, both
// counts ≥ 1): the layout of a job that holds its compute and its memory
// nodes.
func ParseRoles(s string) (Roles, error) { return ParseRolesFor(s, Both) }

// Need is which roles a job's layout must have.
type Need int

const (
	// Both: compute and memory nodes in one job (every command but the
	// two below).
	Both Need = iota
	// MNOnly: memory nodes alone (`dmg serve`, a pool that outlives jobs).
	MNOnly
	// CNOnly: compute nodes alone, attached to a served pool
	// (--pool-file).
	CNOnly
)

// ParseRolesFor parses "cn:C,mn:M" for a job that needs the given roles:
// Both as ParseRoles; MNOnly "mn:M" alone; CNOnly "cn:C" alone.
func ParseRolesFor(s string, need Need) (Roles, error) {
	var r Roles
	seen := map[string]bool{}
	if strings.TrimSpace(s) == "" {
		return r, errors.New(`spmd: --roles is empty; expected "cn:C,mn:M", e.g. "cn:2,mn:2"`)
	}
	for _, part := range strings.Split(s, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return r, errors.Errorf(`spmd: --roles %q: part %q is not NAME:COUNT; expected "cn:C,mn:M"`, s, part)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "cn" && name != "mn" {
			return r, errors.Errorf(`spmd: --roles %q: unknown role %q; the roles are cn (compute node) and mn (memory node)`, s, name)
		}
		if seen[name] {
			return r, errors.Errorf(`spmd: --roles %q: role %s given twice`, s, name)
		}
		seen[name] = true
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil {
			return r, errors.Errorf(`spmd: --roles %q: count %q of %s is not a whole number`, s, count, name)
		}
		if n < 1 {
			return r, errors.Errorf(`spmd: --roles %q: %s count is %d; a job needs at least one compute node and one memory node`, s, name, n)
		}
		if n > MaxRanksPerRole {
			return r, errors.Errorf(`spmd: --roles %q: %s count %d exceeds %d`, s, name, n, MaxRanksPerRole)
		}
		if name == "cn" {
			r.CN = n
		} else {
			r.MN = n
		}
	}
	switch need {
	case MNOnly:
		if seen["cn"] || !seen["mn"] {
			return r, errors.Errorf(`spmd: --roles %q: a serve job holds memory nodes only, e.g. "mn:2" (compute jobs attach to it later with --pool-file)`, s)
		}
	case CNOnly:
		if !seen["cn"] || seen["mn"] {
			return r, errors.Errorf(`spmd: --roles %q: a job attached to a pool (--pool-file) holds compute nodes only, e.g. "cn:2"; its memory nodes are the serve job's`, s)
		}
	default:
		if !seen["cn"] || !seen["mn"] {
			return r, errors.Errorf(`spmd: --roles %q: both cn and mn are needed, e.g. "cn:2,mn:2" (only serve runs memory nodes alone, and only a job with --pool-file compute nodes alone)`, s)
		}
	}
	return r, nil
}

func (r Roles) String() string { return fmt.Sprintf("cn:%d,mn:%d", r.CN, r.MN) }

// Size is the world size the layout needs.
func (r Roles) Size() int { return r.CN + r.MN }

// Check verifies the layout against the world size the job was started with.
func (r Roles) Check(worldSize int) error {
	if r.Size() != worldSize {
		return errors.Errorf("spmd: --roles %s adds up to %d ranks but the job has %d; launch with -np %d or change --roles",
			r, r.Size(), worldSize, r.Size())
	}
	return nil
}

// Of returns the role of a world rank and its index within the role.
func (r Roles) Of(rank int) (Role, int) {
	if rank < r.CN {
		return CN, rank
	}
	return MN, rank - r.CN
}

// RankOf returns the world rank of the index-th rank of a role.
func (r Roles) RankOf(role Role, index int) int {
	if role == CN {
		return index
	}
	return r.CN + index
}
