package fabric

// PauseProgress exposes pauseProgress to the tests of this package.
func PauseProgress(n *Network, paused bool) { n.pauseProgress(paused) }
