// Copyright popshim authors. The messages family's SST partitioner; see
// partitioner.go for why it exists.

#include <cstdint>
#include <cstring>
#include <memory>

#include "rocksdb/options.h"
#include "rocksdb/slice.h"
#include "rocksdb/sst_partitioner.h"

namespace {

// streamPrefixLen is the length of the part of a messages-family key that
// names its append stream: topic 0x00 queueId(u32) for message keys, the
// two bytes 0x00 kind for the index keys that start with 0x00 (keys.go).
size_t streamPrefixLen(const rocksdb::Slice& k) {
  const char* d = k.data();
  size_t n = k.size();
  if (n == 0) return 0;
  if (d[0] == 0) return n < 2 ? n : 2;
  const void* z = std::memchr(d, 0, n);
  if (z == nullptr) return n;
  size_t p = static_cast<size_t>(static_cast<const char*>(z) - d) + 1 + 4;
  return p < n ? p : n;
}

bool sameStream(const rocksdb::Slice& a, const rocksdb::Slice& b) {
  size_t la = streamPrefixLen(a);
  return la == streamPrefixLen(b) && std::memcmp(a.data(), b.data(), la) == 0;
}

// A file of at least kMixBytes ends at the next stream change; below that,
// streams share it unless the next one may have older keys below (see
// mustStartFile). Bounds how many files quiet queues make.
constexpr uint64_t kMixBytes = 1 << 20;

// kLongQueue: a message stream whose first key in this compaction has at
// least this queueOffset may have that many older keys in the level below.
constexpr uint64_t kLongQueue = 1 << 16;

// mustStartFile reports whether a new file must start at key k, the first
// key of its stream in this compaction: always for the 0x00 index streams
// (the physical-offset index is the largest stream there is), and for a
// queue whose offset says it may hold older keys below, which a file
// starting in an earlier stream would overlap.
bool mustStartFile(const rocksdb::Slice& k) {
  size_t p = streamPrefixLen(k);
  if (k.size() > 0 && k.data()[0] == 0) return true;
  if (k.size() != p + 8) return true;
  uint64_t off = 0;
  for (size_t i = p; i < p + 8; i++) {
    off = (off << 8) | static_cast<unsigned char>(k.data()[i]);
  }
  return off >= kLongQueue;
}

class StreamPartitioner : public rocksdb::SstPartitioner {
 public:
  const char* Name() const override { return "popshim.StreamPartitioner"; }

  rocksdb::PartitionerResult ShouldPartition(
      const rocksdb::PartitionerRequest& r) override {
    if (sameStream(*r.prev_user_key, *r.current_user_key)) {
      return rocksdb::kNotRequired;
    }
    if (r.current_output_file_size >= kMixBytes ||
        mustStartFile(*r.prev_user_key) || mustStartFile(*r.current_user_key)) {
      return rocksdb::kRequired;
    }
    return rocksdb::kNotRequired;
  }

  bool CanDoTrivialMove(const rocksdb::Slice& smallest,
                        const rocksdb::Slice& largest) override {
    return true;
  }
};

class StreamPartitionerFactory : public rocksdb::SstPartitionerFactory {
 public:
  static const char* kClassName() { return "popshim.StreamPartitionerFactory"; }
  const char* Name() const override { return kClassName(); }

  std::unique_ptr<rocksdb::SstPartitioner> CreatePartitioner(
      const rocksdb::SstPartitioner::Context&) const override {
    return std::unique_ptr<rocksdb::SstPartitioner>(new StreamPartitioner());
  }
};

}  // namespace

// c.cc (librocksdb's C API) defines rocksdb_options_t as a struct whose
// only member is the rocksdb::Options, so the C handle points at it.
extern "C" void popshim_set_stream_partitioner(void* opts) {
  static_cast<rocksdb::Options*>(opts)->sst_partitioner_factory =
      std::make_shared<StreamPartitionerFactory>();
}

// popshim_stream_prefix_len exposes streamPrefixLen to Go's tests.
extern "C" size_t popshim_stream_prefix_len(const char* k, size_t n) {
  return streamPrefixLen(rocksdb::Slice(k, n));
}

// popshim_should_partition exposes the partitioner's decision to Go's
// tests: 1 when a new file starts at cur after prev, the file so far
// holding size bytes.
extern "C" int popshim_should_partition(const char* prev, size_t prev_n,
                                        const char* cur, size_t cur_n,
                                        uint64_t size) {
  rocksdb::Slice p(prev, prev_n), c(cur, cur_n);
  StreamPartitioner sp;
  return sp.ShouldPartition(rocksdb::PartitionerRequest(p, c, size)) ==
                 rocksdb::kRequired
             ? 1
             : 0;
}
