// The completion token of faultline's network coroutines: `co_await op(..., kTuple)` gives the
// error code (and the result) as a tuple instead of throwing, so a driver handles a refused
// connection or a timeout as a value, as the sans-I/O cores expect. One home for the drivers of
// the fake provider, the proxy and the reference client.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace faultline::net {

inline constexpr auto kTuple = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace faultline::net
