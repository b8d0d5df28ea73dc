#pragma once
// `harness init KIND DIR`: a repository campaign (campaigns/<KIND>.yaml) copied out of the tree,
// so that a researcher edits their own file and the harness checkout stays clean (a tracked
// campaign edited makes the build dirty, and `pinned_commit: build` refuses to plan from a
// dirty build: campaign_yaml.cpp resolve_build_pin). Ours; docs/RESEARCHER.md "Reproducing the pilot and the confirmatory study".
//
// The copy is the file's bytes, comments included, except for the campaign keys whose paths
// are relative to the campaign file's folder (design.dose_mib.from_pilot,
// variants.<v>.kernel.image_dir): a relative value is rewritten to the absolute path it named
// from campaigns/, so it still resolves from DIR.
#include <string>
#include <vector>

namespace harness::campaign {

/// One repository campaign: its KIND (the file's stem) and the first line of its header comment.
struct RepositoryCampaign {
  std::string kind;     ///< e.g. "confirmatory" for campaigns/confirmatory.yaml
  std::string summary;  ///< first sentence of the leading "# " comment block, lines joined ("" when the file starts otherwise)
};

/// The *.yaml files of `campaigns_dir`, sorted by kind. Throws std::runtime_error naming the
/// directory when it cannot be listed.
std::vector<RepositoryCampaign> repository_campaigns(const std::string& campaigns_dir);

/// A path key rewritten by relocate_campaign_text.
struct RelocatedPath {
  std::string field;  ///< dotted field, e.g. "design.dose_mib.from_pilot"
  int line = 0;       ///< 1-based line in the file
  std::string from, to;
};

/// `text` (a campaign file read from `from_dir`, named `file` in messages) with every relative
/// path key (header) replaced by its absolute, lexically normal path from `from_dir`; `out`
/// receives what was rewritten. Absolute paths and everything else are left byte for byte.
/// Throws CampaignError ("FILE:LINE:COL: field F: ...") when a path value is written in a
/// form this rewrite does not reproduce exactly (say, a multi-line scalar): edit it by hand.
std::string relocate_campaign_text(const std::string& text, const std::string& from_dir, const std::string& file,
                                   std::vector<RelocatedPath>* out = nullptr);

/// What init_campaign wrote.
struct CampaignCopy {
  std::string path;                     ///< DIR/<KIND>.yaml
  std::vector<RelocatedPath> relocated;
  std::string next;                     ///< what to edit next and the commands to plan it, lines ending in \n
};

/// Copies campaigns_dir/<kind>.yaml to dir/<kind>.yaml (dir created when missing), paths
/// relocated. Throws std::runtime_error when `kind` is not a repository campaign (listing
/// them) or when dir/<kind>.yaml exists (nothing is overwritten), CampaignError as
/// relocate_campaign_text.
CampaignCopy init_campaign(const std::string& kind, const std::string& campaigns_dir, const std::string& dir);

}  // namespace harness::campaign
