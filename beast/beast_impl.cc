// The single translation unit that holds the compiled code of Boost.Asio and Boost.Beast.
// See beast/CMakeLists.txt for why.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
