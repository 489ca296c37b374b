#include "sim/world/runtime.h"

#include <utility>

#include "sim/proxy/link_proxy.h"

namespace locksim {
namespace {

class RealRuntime final : public Runtime {
 public:
  const Clock& clock() const override { return real_clock(); }
  Threads& threads() override { return os_threads(); }
  std::unique_ptr<Connection> connect(const Endpoint& endpoint,
                                      const ConnectionOptions& options) override {
    return std::make_unique<HiredisConnection>(endpoint, options);
  }
  std::unique_ptr<Link> open_link(const Endpoint& upstream) override {
    return LinkProxy::start(upstream);
  }
};

}  // namespace

Dial Runtime::dial(Endpoint endpoint) {
  return [this, endpoint = std::move(endpoint)](const ConnectionOptions& options) {
    return connect(endpoint, options);
  };
}

Runtime& real_runtime() {
  static RealRuntime runtime;
  return runtime;
}

}  // namespace locksim
