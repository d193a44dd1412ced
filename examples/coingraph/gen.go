package main

import (
	"math/rand/v2"
)

// Flow is one input or output of a transaction: an address and an amount.
type Flow struct {
	Addr   int
	Amount int64
}

// Tx is a generated transaction; a coinbase has no inputs and pays the
// block reward to its miner.
type Tx struct {
	Coinbase bool
	Inputs   []Flow
	Outputs  []Flow
}

// Block is a generated block: its transactions, the coinbase first.
type Block struct {
	Txs []Tx
}

// Chain is a generated blockchain. Addresses are numbered; Owner gives each
// address's (hidden) owner; addresses 0..Exchanges-1 are the exchanges' hot
// addresses, reused by every deposit and withdrawal.
type Chain struct {
	Reward    int64
	Exchanges int
	Blocks    []Block
	Owner     []int
	// Planted are the four addresses of one owner (miner of blocks 1-4),
	// who spends P1+P2 in block 8 with change back to P2, then P2+P3+P4 in
	// block 10: the common-input heuristic puts all four in one cluster.
	Planted []int
	// Tainted is the address a theft paid (-1 if none): the first
	// address paid 10 coins or more by a payment from block 2 on that
	// spends it later.
	Tainted int
}

// Coin is the unit of amounts (like satoshis per bitcoin).
const Coin = 100_000_000

// Generate makes a seeded chain of the given number of blocks (at least
// 12, for the planted owner): each block has a coinbase and 3 to 8
// payments. A payment spends 1 to 3 of its owner's funded addresses whole,
// pays part to a new address of another user or to an exchange, and the
// rest to a new change address (an exchange pays from and takes its change
// to its hot address). No fees: inputs equal outputs.
func Generate(seed uint64, blocks int) *Chain {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const exchanges, users, miners = 3, 60, 3
	c := &Chain{Reward: 50 * Coin, Exchanges: exchanges, Tainted: -1}
	bal := []int64{}
	funded := map[int][]int{} // owner -> addresses with a balance
	newAddr := func(owner int) int {
		c.Owner = append(c.Owner, owner)
		bal = append(bal, 0)
		return len(c.Owner) - 1
	}
	for e := range exchanges {
		newAddr(e)
	}
	pay := func(o Flow) {
		if bal[o.Addr] == 0 {
			funded[c.Owner[o.Addr]] = append(funded[c.Owner[o.Addr]], o.Addr)
		}
		bal[o.Addr] += o.Amount
	}
	// spend takes the given addresses' whole balances as inputs.
	spend := func(addrs []int) ([]Flow, int64) {
		var in []Flow
		var total int64
		for _, a := range addrs {
			in = append(in, Flow{a, bal[a]})
			total += bal[a]
			bal[a] = 0
			f := funded[c.Owner[a]]
			for i, x := range f {
				if x == a {
					funded[c.Owner[a]] = append(f[:i:i], f[i+1:]...)
					break
				}
			}
		}
		return in, total
	}
	firstUser := exchanges
	planted := exchanges + users // an owner outside the random spenders
	commit := func(b *Block, tx Tx) {
		for _, o := range tx.Outputs {
			pay(o)
		}
		b.Txs = append(b.Txs, tx)
	}
	for h := range blocks {
		b := Block{}
		miner := firstUser + rng.IntN(miners)
		if h >= 1 && h <= 4 { // the planted owner mines blocks 1..4
			miner = planted
		}
		cb := Tx{Coinbase: true, Outputs: []Flow{{newAddr(miner), c.Reward}}}
		if miner == planted {
			c.Planted = append(c.Planted, cb.Outputs[0].Addr)
		}
		commit(&b, cb)
		switch h {
		case 8, 10: // the planted owner spends several addresses at once
			ins := []int{c.Planted[0], c.Planted[1]}
			if h == 10 {
				ins = []int{c.Planted[1], c.Planted[2], c.Planted[3]}
			}
			in, total := spend(ins)
			tx := Tx{Inputs: in, Outputs: []Flow{{newAddr(firstUser + rng.IntN(users)), total / 2}}}
			if h == 8 {
				tx.Outputs = append(tx.Outputs, Flow{c.Planted[1], total - total/2}) // change back to P2
			} else {
				tx.Outputs = append(tx.Outputs, Flow{newAddr(planted), total - total/2})
			}
			commit(&b, tx)
		}
		for range 3 + rng.IntN(6) {
			// The spender: an exchange (withdrawing) about a third of the
			// time, else a user; either with money to spend.
			var cands []int
			lo, hi := firstUser, firstUser+users
			if rng.IntN(100) < 35 {
				lo, hi = 0, exchanges
			}
			for o := lo; o < hi; o++ {
				if len(funded[o]) > 0 {
					cands = append(cands, o)
				}
			}
			if len(cands) == 0 {
				continue
			}
			owner := cands[rng.IntN(len(cands))]
			f := funded[owner]
			var ins []int
			if owner < exchanges {
				ins = []int{owner}
			} else {
				k := 1 + rng.IntN(min(3, len(f)))
				perm := rng.Perm(len(f))
				for _, i := range perm[:k] {
					ins = append(ins, f[i])
				}
			}
			in, total := spend(ins)
			amt := max(1, total*int64(10+rng.IntN(81))/100)
			var to int
			if rng.IntN(100) < 40 {
				to = rng.IntN(exchanges)
				if to == owner {
					to = (to + 1) % exchanges
				}
			} else {
				other := firstUser + rng.IntN(users)
				if other == owner {
					other = firstUser + (other-firstUser+1)%users
				}
				to = newAddr(other)
			}
			tx := Tx{Inputs: in, Outputs: []Flow{{to, amt}}}
			if rest := total - amt; rest > 0 {
				change := owner
				if owner >= exchanges {
					change = newAddr(owner)
				}
				tx.Outputs = append(tx.Outputs, Flow{change, rest})
			}
			commit(&b, tx)
		}
		c.Blocks = append(c.Blocks, b)
	}
	// The theft: the first payment of 10 coins or more to a user's address,
	// from block 2 on, that the thief goes on to spend.
	spent := map[int]bool{}
	for _, b := range c.Blocks {
		for _, t := range b.Txs {
			for _, in := range t.Inputs {
				spent[in.Addr] = true
			}
		}
	}
	for _, b := range c.Blocks[2:] {
		for _, t := range b.Txs {
			if o := t.Outputs[0]; !t.Coinbase && c.Tainted < 0 && o.Addr >= exchanges && o.Amount >= 10*Coin && spent[o.Addr] {
				c.Tainted = o.Addr
			}
		}
	}
	return c
}
