/* linux.resources (config-linux.md "Control groups"), also the document
 * `sbx-oci update --resources` reads. Every optional scalar has a has_ flag: an
 * update changes only what it mentions. */
#ifndef SBX_OCI_RESOURCES_H
#define SBX_OCI_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "runtime/base/error.h"

struct oci_device_rule
{
  bool allow;
  char type; /* 'a', 'c', 'b' */
  int64_t major, minor; /* -1 = any */
  char access[4];       /* subset of "rwm" */
};

struct oci_throttle
{
  int64_t major, minor;
  uint64_t rate;
};

struct oci_weight_device
{
  int64_t major, minor;
  bool has_weight, has_leaf_weight;
  uint16_t weight, leaf_weight;
};

struct oci_hugepage_limit
{
  const char *page_size;
  uint64_t limit;
};

struct oci_net_priority
{
  const char *name;
  uint32_t priority;
};

struct oci_rdma
{
  const char *device;
  bool has_handles, has_objects;
  uint32_t handles, objects;
};

struct oci_kv_pair
{
  const char *key, *value;
};

struct oci_resources
{
  bool has_memory;
  struct
  {
    bool has_limit, has_reservation, has_swap, has_kernel, has_kernel_tcp, has_swappiness, has_disable_oom_killer,
        has_use_hierarchy, has_check_before_update;
    int64_t limit, reservation, swap, kernel, kernel_tcp;
    uint64_t swappiness;
    bool disable_oom_killer, use_hierarchy, check_before_update;
  } memory;

  bool has_cpu;
  struct
  {
    bool has_shares, has_quota, has_burst, has_period, has_realtime_runtime, has_realtime_period, has_idle;
    uint64_t shares, burst, period, realtime_period;
    int64_t quota, realtime_runtime, idle;
    const char *cpus, *mems;
  } cpu;

  bool has_pids;
  bool has_pids_limit;
  int64_t pids_limit; /* -1 = max */

  bool has_blkio;
  struct
  {
    bool has_weight, has_leaf_weight;
    uint16_t weight, leaf_weight;
    struct oci_weight_device *weight_device;
    size_t n_weight_device;
    struct oci_throttle *read_bps, *write_bps, *read_iops, *write_iops;
    size_t n_read_bps, n_write_bps, n_read_iops, n_write_iops;
  } blkio;

  struct oci_hugepage_limit *hugepage_limits;
  size_t n_hugepage_limits;

  bool has_network;
  bool has_class_id;
  uint32_t class_id;
  struct oci_net_priority *net_priorities;
  size_t n_net_priorities;

  struct oci_rdma *rdma;
  size_t n_rdma;

  struct oci_kv_pair *unified;
  size_t n_unified;

  bool has_devices;
  struct oci_device_rule *devices;
  size_t n_devices;
};

/* Parse a LinuxResources object; `path` prefixes error messages ("linux.resources").
 * Call oci_resources_clear() afterwards whether it succeeded or not. */
int oci_resources_parse (yajl_val obj, const char *path, struct oci_resources *r, struct sbx_error *err);
void oci_resources_clear (struct oci_resources *r);
/* Does this ask for any cgroup setting at all? */
bool oci_resources_empty (const struct oci_resources *r);

#endif
