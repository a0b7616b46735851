"""Thin entry points: normalize (main job), audit, convert."""

import logging


def _quiet_beam_import_notice(record: logging.LogRecord) -> bool:
    # importing Beam warns that its BigQuery clients are missing; no job here uses BigQuery
    return "apitools not found" not in record.getMessage()


logging.getLogger().addFilter(_quiet_beam_import_notice)
