// The thread pool over robots.
#include "core/ThreadPool.h"

namespace evoc::runtime {

int defaultThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : int(n);
}

ThreadPool::ThreadPool(int threads) {
  int n = threads > 0 ? threads : defaultThreads();
  for (int i = 0; i < n; ++i)
    workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto &t : workers_)
    t.join();
}

void ThreadPool::work(int worker) {
  long seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_)
      return;
    seen = generation_;
    ++busy_;
    while (next_ < n_) {
      int item = next_++;
      lock.unlock();
      try {
        (*fn_)(item, worker);
        lock.lock();
      } catch (...) {
        lock.lock();
        if (!error_)
          error_ = std::current_exception();
        next_ = n_;
      }
    }
    if (--busy_ == 0)
      done_.notify_all();
  }
}

void ThreadPool::parallelFor(int n, const std::function<void(int, int)> &fn) {
  std::unique_lock<std::mutex> lock(mu_);
  fn_ = &fn;
  n_ = n;
  next_ = 0;
  error_ = nullptr;
  ++generation_;
  wake_.notify_all();
  done_.wait(lock, [&] { return next_ >= n_ && busy_ == 0; });
  fn_ = nullptr;
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

} // namespace evoc::runtime
