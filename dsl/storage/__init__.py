"""Files ifr writes for itself or for the user: the cache folder and safe writes."""
