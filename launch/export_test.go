package launch

// FuzzedFlags, for the command-line property test under mpirun
// (launch_test).
var FuzzedFlags = fuzzedFlags
