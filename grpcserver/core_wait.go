package grpcserver

import "context"

// A handler calls a core operation with a completion callback and waits on
// its own goroutine (grpc-go gives every call one) for the callback or the
// call's end. The core never blocks; the callback runs on the caller's
// goroutine for a refusal, else on a reader or the writer's completer, so
// the channels below are buffered and the callback never waits for the
// handler.

// outcome is one completion of an operation with a result.
type outcome[T any] struct {
	v   T
	err error
}

// await runs op and returns what it completed with, or ctx's error when
// the call ends first (the operation still completes; its result is
// dropped).
func await[T any](ctx context.Context, op func(done func(T, error))) (T, error) {
	ch := make(chan outcome[T], 1)
	op(func(v T, err error) { ch <- outcome[T]{v, err} })
	select {
	case o := <-ch:
		return o.v, o.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// awaitAll runs n operations (op(i, done) for i in 0..n-1) at once and
// returns their outcomes in order; entries whose operation had not
// completed when ctx ended carry ctx's error.
func awaitAll[T any](ctx context.Context, n int, op func(i int, done func(T, error))) []outcome[T] {
	return awaitEach(ctx, n, func(done func(int, T, error)) {
		for i := range n {
			op(i, func(v T, err error) { done(i, v, err) })
		}
	})
}

// awaitEach is awaitAll for n operations that start calls at once:
// done(i, v, err) once for each i in 0..n-1.
func awaitEach[T any](ctx context.Context, n int, start func(done func(i int, v T, err error))) []outcome[T] {
	type indexed struct {
		i int
		o outcome[T]
	}
	ch := make(chan indexed, n)
	start(func(i int, v T, err error) { ch <- indexed{i, outcome[T]{v, err}} })
	out := make([]outcome[T], n)
	got := make([]bool, n)
	for left := n; left > 0; left-- {
		select {
		case r := <-ch:
			out[r.i], got[r.i] = r.o, true
		case <-ctx.Done():
			for i := range out {
				if !got[i] {
					out[i].err = ctx.Err()
				}
			}
			return out
		}
	}
	return out
}
