// Package dueloop runs the passes of a background loop that works through
// entries ordered by due time (timer deliveries, transaction checks): one
// goroutine calls the loop's pass function, sleeps for the wait it
// returns, and is woken early by Trigger or by Note of an entry due before
// the planned wake-up. It remembers the earliest due time noted since the
// last pass (TakeLowest), so a pass can move its scan cursor back to an
// entry made durable behind it.
//
// It owns only that scheduling. It must not read the store or submit to
// the writer (the pass function does), and it never blocks a caller of
// Note or Trigger.
package dueloop
