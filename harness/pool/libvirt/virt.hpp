#pragma once
// Owning handles of libvirt C API objects and the error text of the last failed call.
// libvirt prints every error to stderr by default; quiet_libvirt_errors() turns that off so
// that errors reach the user once, in the engine's own messages.
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <memory>
#include <string>
#include <type_traits>

namespace harness::pool::libvirt {

struct ConnClose { void operator()(virConnectPtr p) const { if (p) virConnectClose(p); } };
struct DomainFree { void operator()(virDomainPtr p) const { if (p) virDomainFree(p); } };
struct PoolFree { void operator()(virStoragePoolPtr p) const { if (p) virStoragePoolFree(p); } };
struct VolFree { void operator()(virStorageVolPtr p) const { if (p) virStorageVolFree(p); } };
struct StreamFree { void operator()(virStreamPtr p) const { if (p) virStreamFree(p); } };

using Conn = std::unique_ptr<std::remove_pointer_t<virConnectPtr>, ConnClose>;
using Domain = std::unique_ptr<std::remove_pointer_t<virDomainPtr>, DomainFree>;
using StoragePool = std::unique_ptr<std::remove_pointer_t<virStoragePoolPtr>, PoolFree>;
using Volume = std::unique_ptr<std::remove_pointer_t<virStorageVolPtr>, VolFree>;
using Stream = std::unique_ptr<std::remove_pointer_t<virStreamPtr>, StreamFree>;

/// Stops libvirt's default handler from printing errors to stderr (process-wide, once).
void quiet_libvirt_errors();

/// Message of this thread's last libvirt error ("unknown libvirt error" when none).
std::string last_error();
/// Its code (virErrorNumber; VIR_ERR_OK when none).
int last_error_code();

/// Opens `uri` read-write. Throws harness::pool::PoolError with connect_failure(shown, MSG),
/// `shown` being the URI as the user wrote it ("" = `uri`; deadline.hpp hands libvirt another
/// text for the same host). Waits as long as libvirt does: a deadline is the caller's
/// (deadline.hpp BoundedCall).
Conn open_connection(const std::string& uri, const std::string& shown = "");

/// The message of a failed connection to `uri`, libvirt's message `message` included:
/// "libvirt URI: cannot connect: MSG (" + a hint + ")". When ssh rejected the host key
/// (the message mentions a host key) the hint names host-key verification and the one
/// place libvirt's ssh transport reads host keys from (README.md in this folder, "Host
/// keys"); otherwise it asks whether the daemon runs and may be reached. Every command in
/// it is quoted for a POSIX shell (the URI holds '&' and '?').
std::string connect_failure(const std::string& uri, const std::string& message);

/// Takes ownership of a malloc'ed C string from libvirt ("" for nullptr).
std::string take_string(char* s);

}  // namespace harness::pool::libvirt
