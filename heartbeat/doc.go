// Package heartbeat lets the ranks of a job hear each other across hosts
// in every phase, before the fabric is open as well as after: small UDP
// datagrams between processes, no dependency beyond the standard library.
//
// Every rank opens a Beacon before the ranks exchange where they run, and
// passes its Addrs with that exchange; then Start names the peers it
// beats to and the peers it watches. A watched peer that sends nothing
// for the timeout is reported once (Config.Silent): frozen, cut off, or
// dead. Probe asks the watched peers to answer now and tells, per peer,
// whether it answered, whether its host refused (no such port: the
// process is gone but its host is up), or whether nothing came back
// (a host cut off, or gone): the words a rank needs when the launcher
// ends the job under it.
//
// A datagram carries the job's token, so beats of another job that
// happens to reuse a port are ignored. The package does no printing and
// knows nothing of roles; launch names the ranks.
package heartbeat
