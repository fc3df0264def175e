// Package tree is a fixture for outlines.
package tree

import "fmt"

// Tree is a binary tree.
// It holds ordered values.
type Tree[T any] struct {
	root *node[T]
}

type node[T any] struct {
	left, right *node[T]
	value       T
}

type (
	// Visitor sees each value.
	Visitor interface {
		Visit(v any) bool
	}
	Size int
)

type Alias = Tree[int]

// Insert adds v.
func (t *Tree[T]) Insert(v T) {
	t.root = &node[T]{value: v}
}

func (t Tree[T]) Len() int { return 0 }

func (s Size) String() string {
	return fmt.Sprint(int(s))
}

func New[T any]() *Tree[T] {
	helper := func() {}
	helper()
	return &Tree[T]{}
}
