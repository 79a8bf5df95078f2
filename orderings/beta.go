package orderings

import "math/rand/v2"

// betaStates is Marius Algorithm 3: fix the first c-1 slots, swap every
// on-disk partition through the last slot, then refresh the fixed slots
// with on-disk partitions, until none is left on disk. With rng != nil it
// randomises the sequence the ways §4.1 allows without changing its length:
// a random assignment of partitions to the initial buffer and the disk set,
// and a random order of the disk set before each sweep and each refresh.
func betaStates(p, c int, rng *rand.Rand) [][]int {
	ids := make([]int, p)
	for i := range ids {
		ids[i] = i
	}
	if rng != nil {
		rng.Shuffle(p, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	}
	buf := append([]int(nil), ids[:c]...)
	disk := append([]int(nil), ids[c:]...)
	states := [][]int{append([]int(nil), buf...)}
	for len(disk) > 0 {
		if rng != nil {
			rng.Shuffle(len(disk), func(i, j int) { disk[i], disk[j] = disk[j], disk[i] })
		}
		for i := range disk {
			buf[c-1], disk[i] = disk[i], buf[c-1]
			states = append(states, append([]int(nil), buf...))
		}
		if rng != nil {
			rng.Shuffle(len(disk), func(i, j int) { disk[i], disk[j] = disk[j], disk[i] })
		}
		n := 0
		for i := 0; i < c-1 && i < len(disk); i++ {
			buf[i] = disk[i]
			n++
			states = append(states, append([]int(nil), buf...))
		}
		disk = disk[n:]
	}
	return states
}

// betaOrder is BETA: Algorithm 3's buffer sequence turned into buckets by
// Algorithm 4. Seed 0 gives the canonical, unshuffled order; any other seed
// also shuffles the new buckets of each state (Algorithm 4, line 10).
func betaOrder(p, c int, seed int64) ([]Bucket, [][]int, error) {
	var rng *rand.Rand
	var shuffle func([]Bucket)
	if seed != 0 {
		rng = rand.New(rand.NewPCG(uint64(seed), 0x62657461)) // "beta"
		shuffle = func(b []Bucket) { rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] }) }
	}
	states := betaStates(p, c, rng)
	return statesToOrder(p, states, nil, shuffle), states, nil
}
