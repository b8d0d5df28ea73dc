// The harness's storage pool and volumes on a hypervisor (storage.hpp).
#include "harness/pool/libvirt/storage.hpp"

#include "harness/pool/libvirt/domain_xml.hpp"
#include "harness/pool/pool.hpp"
#include "harness/xml/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>

namespace harness::pool::libvirt {

using harness::xml::xml_text;

namespace {

std::string pool_name(virStoragePoolPtr p) {
  const char* n = virStoragePoolGetName(p);
  return n ? n : "?";
}

std::string vol_name(virStorageVolPtr v) {
  const char* n = virStorageVolGetName(v);
  return n ? n : "?";
}

std::string volume_xml(const std::string& name, std::uint64_t capacity, const char* mode) {
  return "<volume><name>" + xml_text(name) + "</name><capacity unit='bytes'>" + std::to_string(capacity) +
         "</capacity><allocation unit='bytes'>0</allocation><target><format type='raw'/><permissions><mode>" +
         mode + "</mode></permissions></target></volume>";
}

// --- stream callbacks (the same hole logic as libvirt's own virsh vol-upload --sparse)
struct Source {
  int fd = -1;
};

int source_read(virStreamPtr, char* data, size_t nbytes, void* opaque) {
  const int fd = static_cast<Source*>(opaque)->fd;
  for (;;) {
    const ssize_t n = ::read(fd, data, nbytes);
    if (n < 0 && errno == EINTR) continue;
    return static_cast<int>(n);
  }
}

int source_hole(virStreamPtr, int* in_data, long long* length, void* opaque) {
  const int fd = static_cast<Source*>(opaque)->fd;
  const off_t cur = ::lseek(fd, 0, SEEK_CUR);
  if (cur < 0) return -1;
  const off_t data = ::lseek(fd, cur, SEEK_DATA);
  int rc = 0;
  if (data < 0) {
    if (errno != ENXIO) return -1;
    const off_t end = ::lseek(fd, 0, SEEK_END);  // cur is in the file's trailing hole
    if (end < 0) return -1;
    *in_data = 0;
    *length = end - cur;
  } else if (data > cur) {
    *in_data = 0;
    *length = data - cur;
  } else {
    const off_t hole = ::lseek(fd, cur, SEEK_HOLE);
    if (hole < 0) return -1;
    *in_data = 1;
    *length = hole - cur;
  }
  if (::lseek(fd, cur, SEEK_SET) < 0) rc = -1;
  return rc;
}

int source_skip(virStreamPtr, long long length, void* opaque) {
  return ::lseek(static_cast<Source*>(opaque)->fd, static_cast<off_t>(length), SEEK_CUR) < 0 ? -1 : 0;
}

int sink_append(virStreamPtr, const char* data, size_t n, void* opaque) {
  static_cast<std::string*>(opaque)->append(data, n);
  return static_cast<int>(n);
}

class StreamVolumeIo final : public VolumeIo {
 public:
  void upload_file(virConnectPtr conn, virStorageVolPtr vol, const std::string& file) override {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw PoolError("upload " + file + ": " + std::strerror(errno));
    Source src{fd};
    Stream st(virStreamNew(conn, 0));
    bool ok = st && virStorageVolUpload(vol, st.get(), 0, 0, VIR_STORAGE_VOL_UPLOAD_SPARSE_STREAM) == 0;
    ok = ok && virStreamSparseSendAll(st.get(), source_read, source_hole, source_skip, &src) == 0;
    const std::string err = ok ? "" : last_error();
    if (ok) ok = virStreamFinish(st.get()) == 0;
    else if (st) virStreamAbort(st.get());
    ::close(fd);
    if (!ok) throw PoolError("upload of " + file + " into volume " + vol_name(vol) + ": " + (err.empty() ? last_error() : err));
  }

  void write_at(virConnectPtr conn, virStorageVolPtr vol, std::uint64_t offset, const std::string& data) override {
    Stream st(virStreamNew(conn, 0));
    bool ok = st && virStorageVolUpload(vol, st.get(), offset, data.size(), 0) == 0;
    std::size_t sent = 0;
    while (ok && sent < data.size()) {
      const int n = virStreamSend(st.get(), data.data() + sent, data.size() - sent);
      if (n < 0) ok = false;
      else sent += static_cast<std::size_t>(n);
    }
    const std::string err = ok ? "" : last_error();
    if (ok) ok = virStreamFinish(st.get()) == 0;
    else if (st) virStreamAbort(st.get());
    if (!ok)
      throw PoolError("write of " + std::to_string(data.size()) + " bytes at " + std::to_string(offset) + " of volume " +
                      vol_name(vol) + ": " + (err.empty() ? last_error() : err));
  }

  std::string read_tail(virConnectPtr conn, virStorageVolPtr vol, std::uint64_t max_bytes) override {
    const std::uint64_t size = volume_size(vol);
    if (size == 0 || max_bytes == 0) return {};
    const std::uint64_t off = size > max_bytes ? size - max_bytes : 0;
    std::string out;
    Stream st(virStreamNew(conn, 0));
    bool ok = st && virStorageVolDownload(vol, st.get(), off, size - off, 0) == 0;
    ok = ok && virStreamRecvAll(st.get(), sink_append, &out) == 0;
    const std::string err = ok ? "" : last_error();
    if (ok) ok = virStreamFinish(st.get()) == 0;
    else if (st) virStreamAbort(st.get());
    if (!ok) throw PoolError("download of volume " + vol_name(vol) + ": " + (err.empty() ? last_error() : err));
    return out;
  }
};

}  // namespace

std::unique_ptr<VolumeIo> stream_volume_io() { return std::make_unique<StreamVolumeIo>(); }

StoragePool ensure_storage_pool(virConnectPtr conn, const std::string& name, const std::string& path) {
  const std::string where = "storage pool " + name + " on " + take_string(virConnectGetURI(conn));
  StoragePool p(virStoragePoolLookupByName(conn, name.c_str()));
  if (!p) {
    const std::string xml = "<pool type='dir'><name>" + xml_text(name) + "</name><target><path>" + xml_text(path) +
                            "</path><permissions><mode>0755</mode></permissions></target></pool>";
    p.reset(virStoragePoolDefineXML(conn, xml.c_str(), 0));
    if (!p) throw PoolError(where + ": cannot define it at " + path + ": " + last_error());
    if (virStoragePoolBuild(p.get(), 0) != 0) throw PoolError(where + ": cannot build " + path + ": " + last_error());
    virStoragePoolSetAutostart(p.get(), 1);  // the image cache survives a libvirtd restart
  }
  if (virStoragePoolIsActive(p.get()) != 1 && virStoragePoolCreate(p.get(), 0) != 0)
    throw PoolError(where + ": cannot start it: " + last_error());
  if (virStoragePoolRefresh(p.get(), 0) != 0) throw PoolError(where + ": cannot refresh it: " + last_error());
  return p;
}

std::string pool_path(virStoragePoolPtr pool) {
  const std::string xml = take_string(virStoragePoolGetXMLDesc(pool, 0));
  std::smatch m;
  static const std::regex re("<target>\\s*<path>([^<]+)</path>");
  if (!std::regex_search(xml, m, re)) throw PoolError("storage pool " + pool_name(pool) + " has no target path (is it a dir pool?)");
  return m[1].str();
}

Volume find_volume(virStoragePoolPtr pool, const std::string& name) {
  return Volume(virStorageVolLookupByName(pool, name.c_str()));
}

void delete_volume(virStoragePoolPtr pool, const std::string& name) {
  Volume v = find_volume(pool, name);
  if (v && virStorageVolDelete(v.get(), 0) != 0)
    throw PoolError("cannot delete volume " + name + " of storage pool " + pool_name(pool) + ": " + last_error());
}

std::string volume_path(virStorageVolPtr vol) {
  const std::string p = take_string(virStorageVolGetPath(vol));
  if (p.empty()) throw PoolError("volume " + vol_name(vol) + ": no path: " + last_error());
  return p;
}

std::uint64_t volume_size(virStorageVolPtr vol) {
  virStorageVolInfo info{};
  if (virStorageVolGetInfo(vol, &info) != 0) throw PoolError("volume " + vol_name(vol) + ": " + last_error());
  return info.capacity;
}

Volume clone_volume(virStoragePoolPtr pool, virStorageVolPtr from, const std::string& name) {
  delete_volume(pool, name);
  const std::string xml = volume_xml(name, volume_size(from), "0644");
  Volume v(virStorageVolCreateXMLFrom(pool, xml.c_str(), from, 0));
  if (!v) throw PoolError("cannot copy volume " + vol_name(from) + " to " + name + " in storage pool " + pool_name(pool) + ": " + last_error());
  return v;
}

Volume stage_file(virConnectPtr conn, virStoragePoolPtr pool, VolumeIo& io, const std::string& name,
                  const std::string& file, bool* uploaded) {
  if (uploaded) *uploaded = false;
  if (Volume v = find_volume(pool, name)) return v;
  struct stat st{};
  if (::stat(file.c_str(), &st) != 0) throw PoolError("stage " + file + ": " + std::strerror(errno));
  const std::string part = name + ".part";
  delete_volume(pool, part);  // a killed runner's partial upload
  const std::string xml = volume_xml(part, static_cast<std::uint64_t>(st.st_size), "0644");
  Volume p(virStorageVolCreateXML(pool, xml.c_str(), 0));
  if (!p) throw PoolError("cannot create volume " + part + " in storage pool " + pool_name(pool) + ": " + last_error());
  try {
    io.upload_file(conn, p.get(), file);
  } catch (...) {
    virStorageVolDelete(p.get(), 0);
    throw;
  }
  Volume v = clone_volume(pool, p.get(), name);
  virStorageVolDelete(p.get(), 0);
  if (uploaded) *uploaded = true;
  return v;
}

}  // namespace harness::pool::libvirt
