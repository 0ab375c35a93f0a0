// A fixed pool of std::threads that runs loops over robots.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace evoc::runtime {

/// Persistent worker threads; parallelFor hands out items one at a time, so
/// results never depend on the thread count as long as items are
/// independent.
class ThreadPool {
public:
  /// `threads` <= 0: one per hardware thread.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return int(workers_.size()); }
  /// Calls fn(item, worker) for item in [0, n), worker in [0, size()), and
  /// waits. The first exception thrown by fn is rethrown here (remaining
  /// items are skipped).
  void parallelFor(int n, const std::function<void(int item, int worker)> &fn);

private:
  void work(int worker);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int, int)> *fn_ = nullptr;
  int n_ = 0, next_ = 0, busy_ = 0;
  long generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

/// The default thread count: std::thread::hardware_concurrency(), at least 1.
int defaultThreads();

} // namespace evoc::runtime
