package ledger

type Ledger struct {
	entries []int
}

func (l *Ledger) Last() int {
	return l.entries[len(l.entries)]
}

func (l *Ledger) Add(v int) {
	l.entries = append(l.entries, v)
}
