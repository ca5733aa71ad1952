from graveler.sstable.reader import SstReader
from graveler.sstable.writer import SstWriter
__all__ = ["SstReader", "SstWriter"]
