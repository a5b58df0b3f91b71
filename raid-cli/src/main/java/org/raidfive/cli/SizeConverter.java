package org.raidfive.cli;

import org.raidfive.bench.Sizes;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** picocli converter for size options, in {@link Sizes}' grammar. */
final class SizeConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        try {
            return Sizes.parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
