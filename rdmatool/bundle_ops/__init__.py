"""Operations on whole bundles: what changed between two, and shards merged into one fleet."""
